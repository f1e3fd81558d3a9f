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

	"github.com/proxybench/proxybench/agent"
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

// NewRunner runs k6 for the stack s, pinned as s is (s.Pin), at the address its state says the
// targets listen on.
func NewRunner(s *stack.Stack, o RunnerOptions) (*runner.Runner, error) {
	r := baseRunner(s, o)
	r.TargetsFile = s.TargetsFile
	r.CAFile = stack.CertsIn(filepath.Join(s.RunDir, "certs")).CAFile
	if s.Pin != nil {
		r.ClientPrefix, r.ClientCPUs = s.Pin.Wrap(stack.RoleClient, nil), s.Pin.Client
	}
	if st, err := s.LoadState(); err == nil {
		r.Negotiated = st.Negotiated()
	}
	cfg := TargetConfig(s)
	if cfg != s.Config {
		r.TargetsFile = filepath.Join(s.RunDir, ListenTargetsFile)
		if err := writeTargetsFile(r.TargetsFile, cfg); err != nil {
			return nil, err
		}
	}
	r.UpstreamAddr = net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Upstream.H1C))
	r.OfferedStreams = offeredStreams(cfg, r.CAFile)
	return r, nil
}

// TargetConfig is the config the load goes to on this host: targets.json's, or after `make up
// STACK_LISTEN=…` (nothing listens on its loopback address) the same with the address the
// state says, as a load host's (loadHostConfig): for k6, the upstream's reading, the prober and
// the calibration's peers alike.
func TargetConfig(s *stack.Stack) *stack.Config {
	if st, err := s.LoadState(); err == nil && st.Listen != "" && st.Listen != s.Config.Address {
		return loadHostConfig(s.Config, &agent.StackState{State: *st}, st.Listen)
	}
	return s.Config
}

// ListenTargetsFile is where, under the run directory, NewRunner writes the targets file k6
// reads when the stack listens on another address than targets.json's (STACK_LISTEN).
const ListenTargetsFile = "listen/targets.json"

// baseRunner is what a runner takes of this clone (bin/k6, scenarios/) and of o, wherever
// the stack runs.
func baseRunner(s *stack.Stack, o RunnerOptions) *runner.Runner {
	return &runner.Runner{
		K6:           filepath.Join(s.Root, "bin", "k6"),
		ScenariosDir: filepath.Join(s.Root, "scenarios"),
		ResultsDir:   o.ResultsDir,
		Profile:      o.Profile,
		ExtraArgs:    o.ExtraArgs,
		Timeout:      o.Timeout,
		Client:       o.Client,
		Stdout:       os.Stdout,
		Stderr:       os.Stderr,
	}
}

// offeredStreams reads a target's offered streams at c's address and ports, verified against
// caFile; nil when the CA cannot be read.
func offeredStreams(c *stack.Config, caFile string) func(ctx context.Context, target string, proto stack.Protocol) (float64, error) {
	p, err := stack.NewProber(c.Hostname, c.Address, caFile)
	if err != nil {
		return nil
	}
	return func(ctx context.Context, target string, proto stack.Protocol) (float64, error) {
		n, err := p.OfferedStreams(ctx, proto, proto.Port(c.Targets[target]))
		if err != nil {
			return 0, fmt.Errorf("target %s: %w", target, err)
		}
		return float64(n), nil
	}
}

// RunningTargets resolves -targets against what is up: a benchmark of a target that is down
// would only measure connection refusals.
func RunningTargets(s *stack.Stack, spec string) ([]string, error) {
	st, err := s.LoadState()
	if err != nil {
		return nil, err
	}
	return TargetsUp(s.Config, st, st.IsUp, spec)
}

// TargetsUp resolves -targets against st, isUp saying which of its targets run (a remote
// stack's are those of its state: RemoteStack.IsUp).
func TargetsUp(c *stack.Config, st *stack.State, isUp func(string) bool, spec string) ([]string, error) {
	names, err := c.Select(spec)
	if err != nil {
		return nil, err
	}
	var up, down []string
	for _, n := range names {
		switch {
		case isUp(n):
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
