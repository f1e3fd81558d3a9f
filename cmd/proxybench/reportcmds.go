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
	return nil
}

// cmdCompare prints, per cell, the change from results/<a> to results/<b> and whether it is
// beyond the runs' spread.
func cmdCompare(_ context.Context, args []string) error {
	if len(args) != 2 {
		return errors.New("usage: proxybench compare results/<a> results/<b>")
	}
	a, err := report.Build(args[0])
	if err != nil {
		return fmt.Errorf("A: %w", err)
	}
	b, err := report.Build(args[1])
	if err != nil {
		return fmt.Errorf("B: %w", err)
	}
	return report.PrintCompare(os.Stdout, a, b, report.Compare(a, b))
}
