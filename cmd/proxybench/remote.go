package main

// The load host's side of two machines (STACK=https://IP:PORT): the stack runs on the stack
// host, brought up there with `make up` and served by `make agent`; here only k6 runs, and
// everything of the stack's side is read through the agent.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proxybench/proxybench/agent"
	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/stack"
)

// remoteOf is the stack STACK names, on another host; nil when STACK is empty (the stack is
// this machine's). The token file is STACK_TOKEN, default run/agent-token.json; the CA and the
// load host's targets file are written to run/remote/.
func remoteOf(ctx context.Context, s *stack.Stack) (*engine.RemoteStack, error) {
	url := envOr("STACK", "")
	if url == "" {
		return nil, nil
	}
	token := envPath("STACK_TOKEN", filepath.Join(s.RunDir, agent.TokenName))
	return engine.DialStack(ctx, url, token, filepath.Join(s.RunDir, "remote"), s.Config)
}

// holdRemote is hold's counterpart for a stack on another host: the stack is already up there
// (`make up` on the stack host); nothing is brought up or down from here, and no run directory
// lock is taken (the stack host's agent takes it for a restart).
func holdRemote(rs *engine.RemoteStack, s *stack.Stack, f *runFlags) (*held, error) {
	if !rs.IsUp(stack.Direct) {
		return nil, fmt.Errorf("the stack at %s has no upstream (direct) up: run `make up` on the stack host", rs.Agent.Addr())
	}
	h := &held{st: &rs.State.State, down: func() error {
		rs.Agent.Close()
		return nil
	}}
	h.sv = engine.ServedBy(h.st)
	h.r = rs.Runner(s, runnerOptions(s, f))
	h.r.UpstreamPID = h.st.Targets[stack.Direct].PID
	h.dir = filepath.Join(h.r.ResultsDir, f.testid)
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return nil, err
	}
	return h, nil
}

// remoteTargets are those of names the stack host's state has up (or missing, with why); a
// name neither is said, with what to run on the stack host.
func remoteTargets(rs *engine.RemoteStack, s *stack.Stack, spec string) ([]string, error) {
	names, err := engine.TargetsUp(s.Config, &rs.State.State, rs.IsUp, spec)
	if err != nil {
		return nil, fmt.Errorf("the stack at %s: %w (on the stack host)", rs.Agent.Addr(), err)
	}
	return names, nil
}

// cmdStatusRemote is `make status STACK=…`: each target as the stack host's state has it, and
// its health as this host sees it, over the network.
func cmdStatusRemote(ctx context.Context, s *stack.Stack, rs *engine.RemoteStack) error {
	st := rs.State
	prober, proberErr := stack.NewProber(rs.Config.Hostname, rs.Config.Address, rs.CAFile)
	var rows []stack.TargetStatus
	for _, n := range s.Config.Names() {
		row := stack.TargetStatus{Name: n, Problem: st.Missing[n]}
		r := st.Targets[n]
		if r == nil {
			if row.Problem == "" {
				row.Problem = "not up on the stack host"
			}
			rows = append(rows, row)
			continue
		}
		row.Version, row.SHA256, row.PID = r.Version, r.SHA256, r.PID
		row.TLSProfile, row.TLS = st.TLSProfile, r.TLS
		row.Streams = r.MaxStreams
		row.Health = map[stack.Protocol]error{}
		for _, proto := range r.Protocols {
			if proberErr != nil {
				row.Health[proto] = proberErr
				continue
			}
			pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			row.Health[proto] = prober.Probe(pctx, proto, proto.Port(r.Ports))
			cancel()
		}
		rows = append(rows, row)
	}
	fmt.Printf("stack host %s (agent %s); pids are the stack host's, health as this host sees it\n", rs.Config.Address, rs.Agent.Addr())
	stack.PrintStatus(os.Stdout, rows)
	return nil
}

// errPinRemote is PIN given with STACK: the CPU layout is the stack host's `make up PIN=…`.
var errPinRemote = errors.New("PIN with STACK: the targets' CPUs are the stack host's (`make up PIN=…` there); the load host's k6 runs unpinned")
