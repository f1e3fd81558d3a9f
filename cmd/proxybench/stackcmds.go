package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// stackAndTargets loads the stack and resolves the -targets flag every stack command has. With
// "all", a target that fails is recorded and the others go on (stack.Stack.KeepGoing).
func stackAndTargets(name string, args []string) (*stack.Stack, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	targets := setting(fs, "targets", "TARGETS", "")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	s, names, err := stackOf(*targets)
	if err != nil {
		return nil, nil, err
	}
	s.KeepGoing = stack.SelectsAll(*targets)
	return s, names, nil
}

// cmdSetup installs what is missing. With TARGETS=all a target that cannot be installed is said
// ("install failed: …", in its last line too) and the rest is installed: `make bench` then shows
// it as such a row. A target named in TARGETS that fails is an error.
func cmdSetup(ctx context.Context, args []string) error {
	s, names, err := stackAndTargets("setup", args)
	if err != nil {
		return err
	}
	defs, err := s.Definitions(names)
	if err != nil {
		return err
	}
	unavailable, err := s.Install(ctx, defs)
	if err != nil {
		return err
	}
	if _, err = stack.EnsureCerts(filepath.Join(s.RunDir, "certs"), s.Config.Hostname); err != nil {
		return err
	}
	sayFailures("setup", "not installed", len(names), stack.Failures(unavailable))
	return nil
}

// sayFailures is the last line of setup and up when targets failed: which, and why.
func sayFailures(cmd, what string, total int, failed []string) {
	if len(failed) > 0 {
		fmt.Printf("%s: %d of %d targets %s, the others are: %s\n", cmd, len(failed), total, what, strings.Join(failed, "; "))
	}
}

func cmdUp(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	targets := setting(fs, "targets", "TARGETS", "")
	pin := pinFlag(fs)
	listen := setting(fs, "listen", "STACK_LISTEN", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, names, err := stackOf(*targets)
	if err != nil {
		return err
	}
	if s.Pin, err = parsePin(*pin); err != nil {
		return err
	}
	if err := listenOn(s, *listen); err != nil {
		return err
	}
	s.KeepGoing = stack.SelectsAll(*targets)
	unlock, err := s.Lock("up")
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.Up(ctx, names); err != nil {
		return err
	}
	st, err := s.LoadState()
	if err != nil {
		return err
	}
	sayFailures("up", "are not up", len(names), st.Failures())
	return nil
}

// listenOn puts the stack on the stack host's address of -listen (STACK_LISTEN), if given.
func listenOn(s *stack.Stack, spec string) error {
	if spec == "" {
		return nil
	}
	if err := s.ListenOn(spec); err != nil {
		return fmt.Errorf("-listen (STACK_LISTEN) %w", err)
	}
	return nil
}

// held is a stack that bench, soak or calibrate holds up: what is up, the runner for it and
// the results folder of the run (created). down brings the stack down and lets the run
// directory's lock go.
type held struct {
	st   *stack.State
	sv   engine.Served
	r    *runner.Runner
	dir  string
	down func() error
}

// hold takes the run directory's lock for cmd and brings names up (verified). On an error the
// stack is down and the lock released already.
func hold(ctx context.Context, s *stack.Stack, cmd string, names []string, f *runFlags) (h *held, err error) {
	unlock, err := s.Lock(cmd)
	if err != nil {
		return nil, err
	}
	if err := s.Up(ctx, names); err != nil {
		unlock()
		return nil, err
	}
	h = &held{down: func() error {
		defer unlock()
		return s.Down()
	}}
	if h.st, err = s.LoadState(); err != nil {
		return nil, errors.Join(err, h.down())
	}
	h.sv = engine.ServedBy(h.st)
	if h.r, err = newRunner(s, f); err != nil {
		return nil, errors.Join(err, h.down())
	}
	h.r.UpstreamPID = h.st.Targets[stack.Direct].PID // its CPU is the runs' own, not outside load
	h.dir = filepath.Join(h.r.ResultsDir, f.testid)
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return nil, errors.Join(err, h.down())
	}
	return h, nil
}

// pinFlag is -pin of up and bench: the CPU layout, from PIN by default.
func pinFlag(fs *flag.FlagSet) *string {
	return setting(fs, "pin", "PIN", "")
}

func parsePin(spec string) (*stack.Pinning, error) {
	avail, err := stack.AvailableCPUs()
	if err != nil {
		return nil, err
	}
	return stack.ParsePinning(spec, avail)
}

func cmdDown(_ context.Context, _ []string) error {
	s, err := newStack()
	if err != nil {
		return err
	}
	return s.Down()
}

func cmdStatus(ctx context.Context, _ []string) error {
	s, err := newStack()
	if err != nil {
		return err
	}
	rs, err := remoteOf(ctx, s)
	if err != nil {
		return err
	}
	if rs != nil {
		defer rs.Agent.Close()
		return cmdStatusRemote(ctx, s, rs)
	}
	rows, err := s.Status(ctx)
	if err != nil {
		return err
	}
	stack.PrintStatus(os.Stdout, rows)
	return nil
}
