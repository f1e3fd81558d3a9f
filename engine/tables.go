package engine

import (
	"fmt"
	"io"
	"slices"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
)

// Scenarios are the matrix's scenarios in its order: throughput first, then the probes.
func Scenarios() []string {
	var names []string
	for _, s := range append(slices.Clone(runner.Throughput), runner.Probes...) {
		names = append(names, s.Name)
	}
	return names
}

// PrintTables prints every scenario's table again, in matrix order, so one screen holds them.
func PrintTables(w io.Writer, results []*result.Result, profile, testid string) {
	by := map[string][]*result.Result{}
	for _, r := range results {
		by[r.Scenario] = append(by[r.Scenario], r)
	}
	fmt.Fprintln(w, "\n######## proxybench results: client, proxies and upstream share this machine's CPUs (report/README.md)")
	for _, sc := range append(Scenarios(), runner.EqualLoad.Name) {
		if rs := by[sc]; len(rs) > 0 {
			report.PrintRuns(w, fmt.Sprintf("%s  (profile %s, testid %s)", sc, profile, testid), rs)
		}
	}
}

// Validity turns invalid cells into the command's failure, after the tables are out. Skipped
// cells (a protocol the target does not serve) are neither valid nor invalid: they are counted
// apart.
func Validity(w io.Writer, results []*result.Result, dir string) error {
	bad, skipped := 0, 0
	for _, r := range results {
		switch {
		case r.Err != "":
			bad++
		case r.Skipped != "":
			skipped++
		case !r.Valid:
			bad++
		}
	}
	run := len(results) - skipped
	notRun := ""
	if skipped > 0 {
		notRun = fmt.Sprintf("; %d not run: their target does not serve the protocol or is not up", skipped)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d cells invalid%s (see the tables above; results in %s)", bad, run, notRun, dir)
	}
	fmt.Fprintf(w, "\nall %d cells valid%s; results in %s\n", run, notRun, dir)
	return nil
}
