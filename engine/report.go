package engine

import (
	"fmt"
	"time"

	"github.com/proxybench/proxybench/report"
)

// Begin starts the bench's report with its manifest.
func (b *Bench) Begin(manifest map[string]any) {
	b.Report = report.New(b.TestID, b.Profile, manifest)
}

// WriteReport prints the tables and the report's text, and saves bench.json, report.md and
// report.html: what the runs that ended make, whether or not the bench was cut short.
func (b *Bench) WriteReport() error {
	fmt.Fprintf(b.Stderr, "\nbench: %d runs in %v\n", b.done, time.Since(b.t0).Round(time.Second))
	PrintTables(b.Stdout, b.tables, b.Profile, b.TestID)
	// The tables above are run 1 of each cell; this is what the report makes of them all:
	// medians, CV, the fraction of direct and the client-bound flags.
	if err := report.Text(b.Stdout, b.Report); err != nil {
		return err
	}
	if err := b.save(); err != nil {
		return err
	}
	return report.Write(b.Dir, b.Report)
}

// Err is how the bench ended, once its report is written: the upstream's death, a signal, or
// invalid cells.
func (b *Bench) Err() error {
	if b.fatal != nil {
		return fmt.Errorf("%w; the runs before it are in %s, the report above covers them", b.fatal, b.Dir)
	}
	if !b.finished {
		return fmt.Errorf("interrupted at run %d of %d (that run is not measured): the runs finished before it are in %s, the report above covers them, `make report ID=%s` rebuilds it", b.done, b.total, b.Dir, b.TestID)
	}
	return Validity(b.Stdout, b.Results, b.Dir)
}

// Complete tells whether every run of the plan ended: no signal came before the last, and the
// upstream lived.
func (b *Bench) Complete() bool {
	return b.finished && b.fatal == nil
}
