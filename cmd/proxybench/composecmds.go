package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// The commands compose.yaml runs: certs, exec and health in its services, attach after
// `docker compose up`.

// containerNetwork is where a compose service's target listens and finds the upstream:
// PROXYBENCH_LISTEN and PROXYBENCH_UPSTREAM, which compose.yaml sets to STACK_LISTEN (the stack
// host's address) and compose.bridge.yaml to every interface and the direct service.
func containerNetwork() stack.Network {
	return stack.Network{Listen: os.Getenv(stack.ListenEnv), Upstream: os.Getenv(stack.UpstreamEnv)}
}

// cmdCerts makes the local CA and the bench.test leaf in the run directory unless valid ones
// are there: compose's one-shot service, before the targets that serve them. The leaf names
// the stack host's address too (PROXYBENCH_LISTEN), so that a load host verifies it there.
func cmdCerts(ctx context.Context, _ []string) error {
	s, err := newStack()
	if err != nil {
		return err
	}
	if err := s.UseNetwork(ctx, stack.Network{Listen: containerNetwork().Listen}); err != nil {
		return err
	}
	c, err := stack.EnsureCerts(filepath.Join(s.RunDir, "certs"), s.Config.Hostname, s.CertIPs()...)
	if err == nil {
		fmt.Println("certificates: CA", c.CAFile, "leaf", c.CertFile)
	}
	return err
}

// cmdExec runs one target in the foreground as this process: the command of each compose
// service, where containerNetwork says.
func cmdExec(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: proxybench exec TARGET (compose.yaml runs one per service)")
	}
	s, err := newStack()
	if err != nil {
		return err
	}
	if err := s.UseNetwork(ctx, containerNetwork()); err != nil {
		return err
	}
	return s.Exec(args[0])
}

// cmdHealth is each compose service's healthcheck: exit 0 once the target answers, verified,
// over every protocol it serves.
func cmdHealth(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 2*time.Second, "how long each protocol's probe may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: proxybench health [-timeout D] TARGET (compose.yaml's healthchecks)")
	}
	s, err := newStack()
	if err != nil {
		return err
	}
	if err := s.UseNetwork(ctx, stack.Network{Listen: containerNetwork().Listen}); err != nil {
		return err
	}
	return s.Healthy(ctx, fs.Arg(0), *timeout)
}

// cmdAttach adopts a stack docker compose started, after verifying every target over each of
// its protocols, so that `make k6` and `make status` use it; -listen (STACK_LISTEN) is the
// stack host's address the services listen on, as `make up`'s.
func cmdAttach(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("attach", flag.ContinueOnError)
	targets := setting(fs, "targets", "TARGETS", "")
	listen := setting(fs, "listen", "STACK_LISTEN", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, names, err := stackOf(*targets)
	if err != nil {
		return err
	}
	if err := listenOn(s, *listen); err != nil {
		return err
	}
	s.ReadyTimeout = time.Minute // containers that were only just created
	return s.Attach(ctx, names)
}
