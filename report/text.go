package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Text writes, for the terminal at the end of `make bench`, first what the client cannot
// distort (the targets' own CPU per request and their p99 at equal load, as report.md's
// headline leads with them), then the throughput tables (reused, fresh) as aligned plain text:
// medians over the runs with their CV, the runs that were valid, the fraction of direct and the
// client's share of the CPU, as report.md has them.
func Text(w io.Writer, b *Bench) error {
	ew := &errWriter{w: w}
	if lead := leadLines(b); len(lead) > 0 {
		ew.printf("\n== Per protocol, what the client cannot distort  (testid %s)\n", b.TestID)
		for _, l := range lead {
			ew.printf("  %s\n", l)
		}
	}
	for _, t := range []table{throughputTable(b, "reused"), throughputTable(b, "fresh")} {
		if len(t.Rows) == 0 {
			continue
		}
		ew.printf("\n== %s  (testid %s, median over the valid runs)\n", t.Title, b.TestID)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(t.Head, "\t")+"\t")
		for _, r := range t.Rows {
			fmt.Fprintln(tw, strings.Join(r.Cells, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil && ew.err == nil {
			ew.err = err
		}
		for _, n := range t.Notes {
			ew.printf("  %s\n", n)
		}
	}
	if l := clientLine(b); l != "" {
		ew.printf("\n%s.\n", l)
	}
	return ew.err
}
