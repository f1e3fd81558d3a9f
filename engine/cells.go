package engine

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
)

// A Cell is one scenario over its protocols against every target, as one table: what `make k6`
// runs, a plan of one cell with no report.
type Cell struct {
	Scenario string
	Entry    scenarios.Scenario // its catalogue entry
	Protos   []string           // probes and the body-size sweep only
}

// CellsFor is the cell of scenario, over proto when given (a probe's, or the body-size sweep's
// at one size: BODY_BYTES), or why there is none.
func CellsFor(scenario, proto string) ([]Cell, error) {
	entry, ok := scenarios.Lookup(scenario)
	if !ok {
		return nil, fmt.Errorf("unknown SCENARIO %q: it is not in scenarios/catalogue.json", scenario)
	}
	if entry.Mode != scenarios.Probe && entry.Mode != scenarios.Bodies {
		if proto != "" {
			var probes []string
			for _, p := range runner.Probes {
				probes = append(probes, p.Name)
			}
			return nil, fmt.Errorf("PROTO=%s: PROTO applies to the probes only (%s); %s names its protocol itself: leave PROTO empty", proto, strings.Join(probes, ", "), scenario)
		}
		return []Cell{{Scenario: scenario, Entry: entry}}, nil
	}
	protos := slices.Clone(entry.Protos)
	if proto != "" {
		if !slices.Contains(protos, proto) {
			return nil, fmt.Errorf("unknown PROTO %q for probe %s: valid are %s (empty: each)", proto, scenario, strings.Join(protos, ", "))
		}
		protos = []string{proto}
	}
	return []Cell{{Scenario: scenario, Entry: entry, Protos: protos}}, nil
}

// CellRunner runs a cell's jobs, each over n k6 instances (execution segments) when n > 1.
type CellRunner interface {
	Skipper
	RunSegments(ctx context.Context, testid string, j runner.Job, n int) *result.Result
}

// Cells is what `make k6` does: each cell against each target, in turn, and its table; it
// returns every result. A cell its target cannot serve is recorded as not run and shown so.
type Cells struct {
	TestID, Profile string
	Runner          CellRunner
	Segments        int
	Served          Served
	Stdout, Stderr  io.Writer
}

// Run runs cells against targets until the last or a signal.
func (c Cells) Run(ctx context.Context, cells []Cell, targets []string) []*result.Result {
	var all []*result.Result
	for _, cell := range cells {
		var results []*result.Result
		protos := cell.Protos
		if len(protos) == 0 {
			protos = []string{""}
		}
		for _, t := range targets {
			for _, p := range protos {
				if ctx.Err() != nil {
					return all
				}
				job := runner.JobOf(cell.Entry, t, p)
				if res := c.Served.NotRun(c.Runner, c.TestID, job); res != nil {
					if c.Served.Missing[t] == "" {
						fmt.Fprintf(c.Stderr, "\n>>> %s %s %s: not run, %s does not serve %s\n", cell.Scenario, p, t, t, job.Requires())
					}
					results = append(results, res)
					continue
				}
				fmt.Fprintf(c.Stderr, "\n>>> %s %s %s (testid %s)\n", cell.Scenario, p, t, c.TestID)
				results = append(results, c.Runner.RunSegments(ctx, c.TestID, job, c.Segments))
			}
		}
		report.PrintRuns(c.Stdout, fmt.Sprintf("%s  (profile %s, testid %s)", cell.Scenario, c.Profile, c.TestID), results)
		all = append(all, results...)
	}
	return all
}
