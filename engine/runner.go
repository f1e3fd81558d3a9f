package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// RunnerOptions are what a command sets of the runner: where results go, the profile, extra k6
// flags, the run timeout and the client.
type RunnerOptions struct {
	ResultsDir, Profile string
	ExtraArgs           []string
	Timeout             time.Duration
	Client              string
}

// NewRunner runs k6 for the stack s, pinned as s is (s.Pin).
func NewRunner(s *stack.Stack, o RunnerOptions) *runner.Runner {
	r := &runner.Runner{
		K6:           filepath.Join(s.Root, "bin", "k6"),
		ScenariosDir: filepath.Join(s.Root, "scenarios"),
		ResultsDir:   o.ResultsDir,
		TargetsFile:  s.TargetsFile,
		CAFile:       stack.CertsIn(filepath.Join(s.RunDir, "certs")).CAFile,
		Profile:      o.Profile,
		ExtraArgs:    o.ExtraArgs,
		Timeout:      o.Timeout,
		Client:       o.Client,
		UpstreamAddr: net.JoinHostPort(s.Config.Address, strconv.Itoa(s.Config.Upstream.H1C)),
		Stdout:       os.Stdout,
		Stderr:       os.Stderr,
	}
	if s.Pin != nil {
		r.ClientPrefix, r.ClientCPUs = s.Pin.Wrap(stack.RoleClient, nil), s.Pin.Client
	}
	if st, err := s.LoadState(); err == nil {
		r.Negotiated = st.Negotiated()
	}
	if p, err := stack.NewProber(s.Config.Hostname, s.Config.Address, r.CAFile); err == nil {
		r.OfferedStreams = func(ctx context.Context, target string, proto stack.Protocol) (float64, error) {
			n, err := p.OfferedStreams(ctx, proto, proto.Port(s.Config.Targets[target]))
			if err != nil {
				return 0, fmt.Errorf("target %s: %w", target, err)
			}
			return float64(n), nil
		}
	}
	return r
}

// RunningTargets resolves -targets against what is up: a benchmark of a target that is down
// would only measure connection refusals.
func RunningTargets(s *stack.Stack, spec string) ([]string, error) {
	st, err := s.LoadState()
	if err != nil {
		return nil, err
	}
	names, err := s.Config.Select(spec)
	if err != nil {
		return nil, err
	}
	var up, down []string
	for _, n := range names {
		switch {
		case st.IsUp(n):
			up = append(up, n)
		case st.Missing[n] != "":
			// A target that is not up still gets its row, saying why ("install failed", …).
			up = append(up, n)
		default:
			down = append(down, n)
		}
	}
	if len(up) == 0 {
		return nil, errors.New("no target is up: run `make up` first (or `make bench`, which brings the stack up and down itself)")
	}
	if spec != "all" && spec != "" && len(down) > 0 {
		return nil, fmt.Errorf("target %s is not up: run `make up TARGETS=%s`", strings.Join(down, ", "), strings.Join(names, ","))
	}
	return up, nil
}
