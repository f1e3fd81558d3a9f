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

// cmdCerts makes the local CA and the bench.test leaf in the run directory unless valid ones
// are there: compose's one-shot service, before the targets that serve them.
func cmdCerts(_ context.Context, _ []string) error {
	s, err := newStack()
	if err != nil {
		return err
	}
	c, err := stack.EnsureCerts(filepath.Join(s.RunDir, "certs"), s.Config.Hostname)
	if err == nil {
		fmt.Println("certificates: CA", c.CAFile, "leaf", c.CertFile)
	}
	return err
}

// cmdExec runs one target in the foreground as this process: the command of each compose
// service. PROXYBENCH_LISTEN and PROXYBENCH_UPSTREAM (compose.bridge.yaml) say where it
// listens and where the upstream is when the container has a network of its own.
func cmdExec(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: proxybench exec TARGET (compose.yaml runs one per service)")
	}
	s, err := newStack()
	if err != nil {
		return err
	}
	if err := s.UseNetwork(ctx, stack.Network{Listen: os.Getenv(stack.ListenEnv), Upstream: os.Getenv(stack.UpstreamEnv)}); err != nil {
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
	return s.Healthy(ctx, fs.Arg(0), *timeout)
}

// cmdAttach adopts a stack docker compose started, after verifying every target over each of
// its protocols, so that `make k6` and `make status` use it.
func cmdAttach(ctx context.Context, args []string) error {
	s, names, err := stackAndTargets("attach", args)
	if err != nil {
		return err
	}
	s.ReadyTimeout = time.Minute // containers that were only just created
	return s.Attach(ctx, names)
}
