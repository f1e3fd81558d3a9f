package main

// `make k6-cloud`: one scenario with k6 cloud (package cloud). Here: the flags and the
// environment, checked as `make k6` checks them; MODE=local is `make k6`'s run on the local
// stack with `k6 cloud run --local-execution`, MODE=cloud the package's upload.

import (
	"context"
	"flag"
	"os"
	"path/filepath"

	"github.com/proxybench/proxybench/cloud"
	"github.com/proxybench/proxybench/runner"
)

func cmdK6Cloud(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("k6-cloud", flag.ContinueOnError)
	scenario, proto := cellFlags(fs)
	s := cloud.Settings{}
	settingVar(fs, &s.Mode, "mode", "MODE", cloud.Local)
	settingVar(fs, &s.TargetURL, "target-url", "TARGET_URL", "")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return err
	}
	cells, err := k6Cells(*scenario, *proto)
	if err != nil {
		return err
	}
	s.Segments = os.Getenv("SEGMENTS")
	if err := s.Check(); err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if s.Mode == cloud.Remote {
		return cloud.RunRemote(ctx, cloud.Test{
			K6: cloud.K6{
				Path:    filepath.Join(root, "bin", "k6"),
				Environ: os.Environ(), Stdout: os.Stdout, Stderr: os.Stderr,
			},
			ScenariosDir: filepath.Join(root, "scenarios"), Cells: cells,
			TargetURL: s.TargetURL, TestID: f.testid, Profile: f.profile,
			Extra: f.extra, Getenv: os.Getenv,
		})
	}
	// the login before the stack is read: k6 would say it is missing only after its setup
	if err := cloud.CheckLogin(os.Getenv); err != nil {
		return err
	}
	return runOnStack(ctx, f, cells, func(r *runner.Runner) {
		r.Command = []string{"cloud", "run", "--local-execution"}
	})
}
