package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"

	"github.com/proxybench/proxybench/stack"
)

// stackAndTargets loads the stack and resolves the -targets flag every stack command has.
func stackAndTargets(name string, args []string) (*stack.Stack, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	targets := fs.String("targets", envOr("TARGETS", "all"), "targets: all or a comma-separated list")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	s, err := newStack()
	if err != nil {
		return nil, nil, err
	}
	names, err := s.Config.Select(*targets)
	return s, names, err
}

func cmdSetup(ctx context.Context, args []string) error {
	s, names, err := stackAndTargets("setup", args)
	if err != nil {
		return err
	}
	defs, err := s.Definitions(names)
	if err != nil {
		return err
	}
	if _, err := s.Install(ctx, defs); err != nil {
		return err
	}
	_, err = stack.EnsureCerts(filepath.Join(s.RunDir, "certs"), s.Config.Hostname)
	return err
}

func cmdUp(ctx context.Context, args []string) error {
	s, names, err := stackAndTargets("up", args)
	if err != nil {
		return err
	}
	return s.Up(ctx, names)
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
	rows, err := s.Status(ctx)
	if err != nil {
		return err
	}
	stack.PrintStatus(os.Stdout, rows)
	return nil
}
