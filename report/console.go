package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/proxybench/proxybench/internal/result"
)

// A textTable is what the console shows of a set of cells: "== Title", the head and rows
// aligned to the right, then one line per note. `make k6`, `make bench` as it goes and at its
// end print every table this way.
type textTable struct {
	Title string
	Head  []string
	Rows  [][]string
	Notes []string
}

// Write writes the table to w.
func (t *textTable) Write(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "\n== %s\n", t.Title); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range append([][]string{t.Head}, t.Rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		if _, err := fmt.Fprintln(w, "  "+n); err != nil {
			return err
		}
	}
	return nil
}

// PrintRuns writes one scenario's runs side by side, one row per target (and protocol, for
// probes), under the columns the report's tables take theirs from (columns.go): a run is a cell
// of one run. An invalid run says why in a note instead of hiding among the valid ones.
func PrintRuns(w io.Writer, title string, results []*result.Result) {
	_ = consoleTable(title, results).Write(w) // the console: nothing to do on a failed write
}

func consoleTable(title string, results []*result.Result) *textTable {
	t := &textTable{Title: title}
	var cells []*Cell
	var notes, skipped, timing []string
	for _, r := range results {
		c := &Cell{Scenario: r.Scenario, Target: r.Target, Proto: r.Proto, Mode: r.Mode, Route: r.Route, Client: r.Client}
		switch {
		case r.Skipped != "" && r.Err == "":
			// said, not left out: a target without h3 is a row that says so
			c.NoProto, c.NoProtoReason = r.Skipped, r.SkipReason
			skipped = append(skipped, fmt.Sprintf("%s %s: %s", r.Target, r.Proto, r.SkipReason))
		default:
			c.Runs = []Run{newRun("", r, nil)}
			if n := timingNote(r); n != "" {
				timing = append(timing, n)
			}
			if !c.Runs[0].Valid {
				notes = append(notes, fmt.Sprintf("%s %s: %s", r.Target, r.Proto, strings.Join(c.Runs[0].Invalid, "; ")))
			}
		}
		finishCell(c)
		cells = append(cells, c)
	}
	mode := ""
	if len(results) > 0 {
		mode = results[0].Mode
	}
	head, rows := cellRows(cells, cellColumns(inConsole, mode, cells))
	t.Head = head
	for _, r := range rows {
		t.Rows = append(t.Rows, r.Cells)
	}
	for _, n := range skipped {
		t.Notes = append(t.Notes, "not run: "+n)
	}
	t.Notes = append(t.Notes, timing...)
	for _, n := range notes {
		t.Notes = append(t.Notes, "invalid: "+n)
	}
	return t
}

// timingNote says what a run's timing figures went through beside the target: the outside
// load the machine saw, and a paced probe's stalls, which are figures and never a verdict.
func timingNote(r *result.Result) string {
	var says []string
	if r.OutsideLoad.Busy() {
		says = append(says, fmt.Sprintf("* outside load: other processes used %.0f%% of the CPU during the run, so its timings are the machine's as much as the target's",
			r.OutsideLoad.CPUShare*100))
	}
	if p := r.Pacing; p != nil && p.Stalls > 0 {
		says = append(says, fmt.Sprintf("stalled: %.0f of %.0f responses had a gap over %g ms (a figure, not a verdict: one late part, then the beat again, is what a busy machine makes too)",
			p.Stalls, p.Responses, p.StallOverMS))
	}
	if s := r.Pacing.Sporadic(); s != "" {
		says = append(says, s)
	}
	if len(says) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s: %s", r.Target, r.Proto, strings.Join(says, "; "))
}
