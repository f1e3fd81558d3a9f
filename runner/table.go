package runner

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/scenarios"
)

// A Table is what the console shows of a set of cells: "== Title", the head and rows aligned to
// the right, then one line per note. `make k6` and `make bench` print every table this way.
type Table struct {
	Title string
	Head  []string
	Rows  [][]string
	Notes []string
}

// Write writes the table to w.
func (t *Table) Write(w io.Writer) error {
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

// PrintTable writes one scenario's results side by side, one row per target (and protocol, for
// probes). An invalid cell says why instead of hiding among the valid ones.
func PrintTable(w io.Writer, title string, results []*result.Result) {
	_ = resultsTable(title, results).Write(w) // the console: nothing to do on a failed write
}

func resultsTable(title string, results []*result.Result) *Table {
	t := &Table{Title: title}
	extras := extraKeys(results)
	fresh, upstream, answered, cost := false, false, false, false
	for _, r := range results {
		fresh = fresh || r.NewConnections != nil
		cost = cost || r.Cost != nil
		upstream = upstream || r.UpstreamConns != nil
		answered = answered || r.UpstreamRequests != nil
	}
	head := []string{"target", "proto"}
	if cost {
		// what the client cannot distort first: per new connection for a fresh run
		head = append(head, map[bool]string{false: "target CPU µs/req", true: "target CPU µs/conn"}[fresh])
	}
	head = append(head, "reqs", "req/s", "p50 ms", "p95 ms", "p99 ms", "failed", "checks ✗")
	if fresh {
		head = append(head, "new conns")
	}
	if upstream {
		head = append(head, "upstream conns/1k req")
	}
	if answered {
		head = append(head, "upstream answered")
	}
	for _, k := range extras {
		head = append(head, strings.TrimPrefix(k, "http_req_")+" p50")
		if scenarios.GapTrend(k) {
			head = append(head, k+" max")
		}
	}
	head = append(head, "protocol seen", "valid")
	t.Head = head
	// blank is a row without figures: the target, its protocol, a dash per column, and why.
	blank := func(target, proto, why string) {
		row := append([]string{target, proto}, slices.Repeat([]string{"-"}, len(head)-3)...)
		t.Rows = append(t.Rows, append(row, why))
	}
	var notes, skipped, timing []string
	for _, r := range results {
		proto := r.Proto
		if r.Skipped != "" && r.Err == "" {
			// Said, not left out: a target without h3 is a row that says so.
			blank(r.Target, proto, r.Skipped)
			skipped = append(skipped, fmt.Sprintf("%s %s: %s", r.Target, proto, r.SkipReason))
			continue
		}
		if r.Err != "" && r.Schema == 0 {
			blank(r.Target, proto, "ERROR")
			notes = append(notes, fmt.Sprintf("%s: %s", r.Target, r.Err))
			continue
		}
		row := []string{r.Target, proto}
		if cost {
			c := "-"
			if r.Cost != nil {
				c = fmt.Sprintf("%.0f", r.Cost.TargetCPUMicros)
			}
			row = append(row, c)
		}
		row = append(row,
			fmt.Sprintf("%.0f", r.Requests), rate(r.RPS),
			Millis(r.Latency.P50), Millis(r.Latency.P95), Millis(r.Latency.P99),
			fmt.Sprintf("%.0f", r.FailedRequests), fmt.Sprintf("%.0f", r.Checks.Fails),
		)
		if fresh {
			n := "-"
			if r.NewConnections != nil {
				n = fmt.Sprintf("%.0f", *r.NewConnections)
			}
			row = append(row, n)
		}
		if upstream {
			u := "-"
			if r.UpstreamConns != nil {
				u = fmt.Sprintf("%.1f", r.UpstreamConns.Per1k)
			}
			row = append(row, u)
		}
		if answered {
			a := "-"
			if u := r.UpstreamRequests; u != nil && u.Completed > 0 {
				a = fmt.Sprintf("%.1f%%", u.Share*100)
			}
			row = append(row, a)
		}
		for _, k := range extras {
			s, ok := r.Extra[k]
			if ok {
				row = append(row, Millis(s.P50))
			} else {
				row = append(row, "-")
			}
			if scenarios.GapTrend(k) {
				row = append(row, gapMax(s, ok, r.OutsideLoad))
			}
		}
		if n := timingNote(r, proto); n != "" {
			timing = append(timing, n)
		}
		valid := "yes"
		if !r.Valid || r.Err != "" {
			valid = "NO"
			reasons := append([]string{}, r.Invalid...)
			if r.Err != "" {
				reasons = append(reasons, r.Err)
			}
			notes = append(notes, fmt.Sprintf("%s %s: %s", r.Target, proto, strings.Join(reasons, "; ")))
		}
		t.Rows = append(t.Rows, append(row, seen(r.ProtosSeen), valid))
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

// gapMax is the longest gap between parts, marked * when the run saw outside load.
func gapMax(s result.Stats, ok bool, o *result.OutsideLoad) string {
	if !ok {
		return "-"
	}
	if o.Busy() {
		return Millis(s.Max) + "*"
	}
	return Millis(s.Max)
}

// timingNote says what a run's timing figures went through beside the target: the outside
// load the machine saw, and a paced probe's stalls, which are figures and never a verdict.
func timingNote(r *result.Result, proto string) string {
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
	return fmt.Sprintf("%s %s: %s", r.Target, proto, strings.Join(says, "; "))
}

// rate is "-" where the scenario measured none (probes: one VU in sequence is not a rate).
func rate(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", *v)
}

// Millis formats milliseconds as every table shows them: two decimals below 100.
func Millis(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// seen lists the protocols responses arrived over, with counts when there is more than one.
func seen(protos map[string]float64) string {
	var keys []string
	for k, n := range protos {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) <= 1 {
		return strings.Join(keys, "")
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%.0f", k, protos[k])
	}
	return strings.Join(parts, " ")
}

func extraKeys(results []*result.Result) []string {
	set := map[string]bool{}
	for _, r := range results {
		for k := range r.Extra {
			set[k] = true
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
