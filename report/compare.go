package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/proxybench/proxybench/internal/result"
)

// SpreadFactor is how far a change must go to count as beyond the runs' spread: |B − A|
// (medians) over SpreadFactor × the larger of the two cells' sample standard deviations.
const SpreadFactor = 2

// Change is one cell of two benchmarks side by side.
type Change struct {
	Scenario, Target, Proto string
	Metric                  string // "req/s" (throughput), "p50 ms" (probes), "p99 ms" (equal load)
	HigherIsBetter          bool
	A, B                    result.Summary // N 0: the cell has no valid run in that bench
	// ChangePct is (B − A) / A × 100 of the medians; nil when either is missing or A is 0.
	ChangePct *float64
	// Exceeds: |B − A| > SpreadFactor × max(stdev A, stdev B); only decided when both have at
	// least two valid runs.
	Exceeds bool
	Note    string // "n=1: no spread", "only in A", "no valid run in B", …
}

// Verdict says in a word or two what the change means.
func (c Change) Verdict() string {
	switch {
	case c.Note != "":
		return c.Note
	case c.Exceeds && c.ChangePct != nil && (*c.ChangePct > 0) == c.HigherIsBetter:
		return "better, beyond spread"
	case c.Exceeds:
		return "WORSE, beyond spread"
	}
	return "within spread"
}

// Compare compares b with a, cell by cell (A's order, then cells only B has).
func Compare(a, b *Bench) []Change {
	type key struct{ scenario, target, proto string }
	var out []Change
	seen := map[key]bool{}
	for i := range a.Cells {
		ca := &a.Cells[i]
		k := key{ca.Scenario, ca.Target, ca.Proto}
		seen[k] = true
		out = append(out, compareCells(ca, b.find(ca.Scenario, ca.Target, ca.Proto)))
	}
	for i := range b.Cells {
		cb := &b.Cells[i]
		if !seen[key{cb.Scenario, cb.Target, cb.Proto}] {
			out = append(out, compareCells(nil, cb))
		}
	}
	type ekey struct{ target, proto string }
	// equal-load: every run of a target and protocol (RUNS of them) is compared as one cell
	runsOf := func(bb *Bench) (map[ekey][]*EqualLoadCell, []ekey) {
		m := map[ekey][]*EqualLoadCell{}
		var order []ekey
		for i := range bb.EqualLoad {
			e := &bb.EqualLoad[i]
			k := ekey{e.Target, e.Proto}
			if m[k] == nil {
				order = append(order, k)
			}
			m[k] = append(m[k], e)
		}
		return m, order
	}
	ea, aOrder := runsOf(a)
	eb, bOrder := runsOf(b)
	for _, k := range aOrder {
		out = append(out, compareEqual(ea[k], eb[k]))
	}
	for _, k := range bOrder {
		if ea[k] == nil {
			out = append(out, compareEqual(nil, eb[k]))
		}
	}
	return append(out, compareCapacity(a, b)...)
}

// compareCapacity compares every target's capacity in A with B's, one search each: no spread
// to weigh a change against, and a capacity at the client's ceiling is a bound, not a figure.
func compareCapacity(a, b *Bench) []Change {
	type ckey struct{ target, proto string }
	index := func(bb *Bench) map[ckey]*CapacityCell {
		m := map[ckey]*CapacityCell{}
		for i := range bb.Capacity {
			m[ckey{bb.Capacity[i].Target, bb.Capacity[i].Proto}] = &bb.Capacity[i]
		}
		return m
	}
	ia, ib := index(a), index(b)
	var keys []ckey
	for _, bb := range []*Bench{a, b} {
		for _, c := range bb.Capacity {
			if k := (ckey{c.Target, c.Proto}); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	summary := func(c *CapacityCell) result.Summary {
		if c == nil || c.Rate == 0 || c.Err != "" {
			return result.Summary{}
		}
		return result.Summarize([]float64{float64(c.Rate)})
	}
	var out []Change
	for _, k := range keys {
		ca, cb := ia[k], ib[k]
		ch := Change{Scenario: "capacity", Target: k.target, Proto: k.proto, Metric: "capacity req/s", HigherIsBetter: true, A: summary(ca), B: summary(cb)}
		switch {
		case ca == nil:
			ch.Note = "only in B"
		case cb == nil:
			ch.Note = "only in A"
		case ca.GoalMS != cb.GoalMS:
			decide(&ch)
			ch.Note = fmt.Sprintf("different goals (p99 ≤ %g vs %g ms)", ca.GoalMS, cb.GoalMS)
		case ca.AtCeiling || cb.AtCeiling:
			decide(&ch)
			ch.Note = "at the client's ceiling: a bound, not a capacity"
		default:
			decide(&ch)
		}
		out = append(out, ch)
	}
	return out
}

// figure is the summary a cell is compared on: req/s for throughput, the probe figure's p50
// for probes (first event for /sse, first chunk for /stream, echo for /ws).
func figure(c *Cell) (metric string, s result.Summary, higherBetter bool) {
	if c.Mode == "reused" || c.Mode == "fresh" {
		return "req/s", c.RPS, true
	}
	var xs []float64
	for i := range c.Runs {
		if c.Runs[i].Valid {
			xs = append(xs, probeFigure(c.Scenario, &c.Runs[i]))
		}
	}
	return "p50 ms", result.Summarize(xs), false
}

func compareCells(a, b *Cell) Change {
	var ch Change
	ref := a
	if ref == nil {
		ref = b
	}
	ch.Scenario, ch.Target, ch.Proto = ref.Scenario, ref.Target, ref.Proto
	ch.Metric, _, ch.HigherIsBetter = figure(ref)
	switch {
	case a == nil:
		_, ch.B, _ = figure(b)
		ch.Note = "only in B"
		return ch
	case b == nil:
		_, ch.A, _ = figure(a)
		ch.Note = "only in A"
		return ch
	}
	_, ch.A, _ = figure(a)
	_, ch.B, _ = figure(b)
	switch {
	case a.NoProto != "" || b.NoProto != "":
		ch.Note = strings.TrimSpace(a.NoProto + " " + b.NoProto)
		if a.NoProto != "" && b.NoProto != "" {
			ch.Note = a.NoProto
		}
		return ch
	}
	decide(&ch)
	return ch
}

// compareEqual compares one target's equal-load runs in A with those in B on p99, over the
// runs that were valid and sustained the offered rate (a target behind its load has no p99 to
// compare).
func compareEqual(a, b []*EqualLoadCell) Change {
	ch := Change{Scenario: "equal-load", Metric: "p99 ms"}
	summary := func(es []*EqualLoadCell) result.Summary {
		var p99 []float64
		for _, e := range es {
			if e.Valid && e.Overload == "" {
				p99 = append(p99, e.P99)
			}
		}
		return result.Summarize(p99)
	}
	ref := a
	if ref == nil {
		ref = b
	}
	ch.Target, ch.Proto = ref[0].Target, ref[0].Proto
	ch.A, ch.B = summary(a), summary(b)
	switch {
	case a == nil:
		ch.Note = "only in B"
	case b == nil:
		ch.Note = "only in A"
	case a[0].RateRPS != b[0].RateRPS:
		decide(&ch)
		ch.Note = fmt.Sprintf("different offered load (%s vs %s req/s)", fmtInt(a[0].RateRPS), fmtInt(b[0].RateRPS))
	default:
		decide(&ch)
	}
	return ch
}

// decide fills ChangePct, Exceeds and the n=1 / invalid notes from A and B.
func decide(ch *Change) {
	switch {
	case ch.A.N == 0 && ch.B.N == 0:
		ch.Note = "no valid run in A nor B"
		return
	case ch.A.N == 0:
		ch.Note = "no valid run in A"
		return
	case ch.B.N == 0:
		ch.Note = "no valid run in B"
		return
	}
	if ch.A.Median != 0 {
		p := (ch.B.Median - ch.A.Median) / math.Abs(ch.A.Median) * 100
		ch.ChangePct = &p
	}
	if ch.A.N < 2 || ch.B.N < 2 {
		ch.Note = "n=1: no spread"
		return
	}
	ch.Exceeds = math.Abs(ch.B.Median-ch.A.Median) > SpreadFactor*math.Max(ch.A.Stdev, ch.B.Stdev)
}

// PrintCompare writes the comparison as a table.
func PrintCompare(w io.Writer, a, b *Bench, changes []Change) error {
	ga, gb := firstScreen(a), firstScreen(b)
	fmt.Fprintf(w, "A: %s (profile %s), %s\nB: %s (profile %s), %s\n", a.TestID, a.Profile, ga.ValidText(), b.TestID, b.Profile, gb.ValidText())
	if a.Profile != b.Profile {
		fmt.Fprintln(w, "note: the profiles differ; changes mix load settings with whatever else changed")
	}
	writeHeadlines(w, headline(a), headline(b))
	fmt.Fprintf(w, "a change is beyond spread when |B − A| of the medians > %d × the larger stdev of the runs\n\n", SpreadFactor)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tproto\ttarget\tmetric\tA median\tA n\tA CV%\tB median\tB n\tB CV%\tchange\tverdict\t")
	for _, c := range changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t\n",
			c.Scenario, c.Proto, c.Target, c.Metric,
			figureText(c.Metric, c.A), c.A.N, cvCompare(c.A), figureText(c.Metric, c.B), c.B.N, cvCompare(c.B),
			pctText(c.ChangePct), c.Verdict())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Said under the table too, where a cell "only in A" is read: its B file may be the one
	// that could not be read.
	for _, side := range []struct {
		name string
		b    *Bench
	}{{"A", a}, {"B", b}} {
		if len(side.b.Unreadable) == 0 {
			continue
		}
		files := make([]string, len(side.b.Unreadable))
		for i, u := range side.b.Unreadable {
			files[i] = u.File
		}
		if _, err := fmt.Fprintf(w, "\nnote: %s (%s) leaves out %d result file(s) it could not read, so their runs are missing above: %s\n",
			side.name, side.b.TestID, len(files), strings.Join(files, ", ")); err != nil {
			return err
		}
	}
	return nil
}

func figureText(metric string, s result.Summary) string {
	if s.N == 0 {
		return "—"
	}
	if metric == "req/s" {
		return fmtInt(s.Median)
	}
	return ms(s.Median)
}

func cvCompare(s result.Summary) string {
	if s.N < 2 {
		return "—"
	}
	return fmt.Sprintf("%.1f", s.CVPct)
}

func pctText(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", *p)
}

// writeHeadlines sets each line of A's headline (report.md's "Headline" section) beside the
// same line of B's: per topic, what A says, then what B says, in A's order, then the topics
// only B has.
func writeHeadlines(w io.Writer, a, b []headLine) {
	var topics []string
	byTopic := map[string][2]string{}
	for i, side := range [][]headLine{a, b} {
		for _, l := range side {
			t, ok := byTopic[l.Topic]
			if !ok {
				topics = append(topics, l.Topic)
			}
			t[i] = l.rest()
			byTopic[l.Topic] = t
		}
	}
	if len(topics) == 0 {
		return
	}
	fmt.Fprintf(w, "\nHeadline, A then B:\n")
	for _, t := range topics {
		fmt.Fprintf(w, "  %s\n", t)
		for i, name := range []string{"A", "B"} {
			say := byTopic[t][i]
			if say == "" {
				say = "—"
			}
			fmt.Fprintf(w, "    %s  %s\n", name, say)
		}
	}
	fmt.Fprintln(w)
}
