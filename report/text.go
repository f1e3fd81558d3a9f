package report

import (
	"fmt"
	"io"
)

// Text writes, for the terminal at the end of `make bench`, first what the client cannot
// distort (the targets' own CPU per request and their p99 at equal load, as report.md's
// headline leads with them), then the throughput tables (reused, fresh) as aligned plain text:
// medians over the runs with their CV, the runs that were valid, the fraction of direct and the
// client's share of the CPU, as report.md has them; then the idle and connections tables.
func Text(w io.Writer, b *Bench) error {
	ew := &errWriter{w: w}
	if lead := leadLines(b); len(lead) > 0 {
		ew.printf("\n== Per protocol, what the client cannot distort  (testid %s)\n", b.TestID)
		for _, l := range lead {
			ew.printf("  %s\n", l.Text)
		}
	}
	for i, t := range append([]table{throughputTable(b, "reused"), throughputTable(b, "fresh"), idleTable(b), connectionsTable(b)}, bodiesTables(b)...) {
		if len(t.Rows) == 0 {
			continue
		}
		over := ", median over the valid runs"
		if i >= 2 {
			over = ", one run a point" // the sweeps (idle, connections, bodies) run once per point
		}
		ct := textTable{Title: fmt.Sprintf("%s  (testid %s%s)", t.Title, b.TestID, over), Head: t.Head, Notes: t.Notes}
		for _, r := range t.Rows {
			ct.Rows = append(ct.Rows, r.Cells)
		}
		if err := ct.Write(w); err != nil && ew.err == nil {
			ew.err = err
		}
	}
	if l := clientLine(b); l != "" {
		ew.printf("\n%s.\n", l)
	}
	return ew.err
}
