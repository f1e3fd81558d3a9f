package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proxybench/proxybench/report"
)

// cmdReport writes results/<id>/report.md and report.html from the saved bench.json, or from
// the per-run result files when there is none.
func cmdReport(_ context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: proxybench report results/<testid>")
	}
	dir := args[0]
	b, err := report.Build(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, report.BenchFile)); err != nil {
		fmt.Fprintf(os.Stderr, "report: no %s in %s: rebuilt from the %d cells' result files (no resources, no manifest)\n", report.BenchFile, dir, len(b.Cells))
	}
	if err := report.Write(dir, b); err != nil {
		return err
	}
	fmt.Printf("%s\n%s\n", filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
	// Last, so that it is what the user reads: the report is out, and lacks these.
	report.WarnUnreadable(os.Stderr, "report", dir, b, "run `"+makeCmd("report", "ID", dir)+"` again")
	return nil
}

// makeCmd is the make command that reruns cmd on the results folder dir: `make report
// ID=<testid>` when dir is results/<testid>, else proxybench's own.
func makeCmd(cmd, key, dir string) string {
	if filepath.Base(filepath.Dir(filepath.Clean(dir))) == "results" {
		return "make " + cmd + " " + key + "=" + filepath.Base(dir)
	}
	return "proxybench " + cmd + " " + dir
}

// cmdCompare prints, per cell, the change from results/<a> to results/<b> and whether it is
// beyond the runs' spread.
func cmdCompare(_ context.Context, args []string) error {
	if len(args) != 2 {
		return errors.New("usage: proxybench compare results/<a> results/<b>")
	}
	a, err := report.Build(args[0])
	if err != nil {
		return fmt.Errorf("A: %w", err) //nolint:staticcheck // A and B are the make variables (make compare A=… B=…)
	}
	b, err := report.Build(args[1])
	if err != nil {
		return fmt.Errorf("B: %w", err) //nolint:staticcheck // idem
	}
	if err := report.PrintCompare(os.Stdout, a, b, report.Compare(a, b)); err != nil {
		return err
	}
	again := "run `proxybench compare " + args[0] + " " + args[1] + "` again"
	if filepath.Base(filepath.Dir(filepath.Clean(args[0]))) == "results" && filepath.Base(filepath.Dir(filepath.Clean(args[1]))) == "results" {
		again = "run `make compare A=" + filepath.Base(args[0]) + " B=" + filepath.Base(args[1]) + "` again"
	}
	report.WarnUnreadable(os.Stderr, "compare: A", args[0], a, again)
	report.WarnUnreadable(os.Stderr, "compare: B", args[1], b, again)
	return nil
}
