package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/verdict"
)

// extraMedian is the median over the valid runs of an extra trend's p50, "—" without one.
func extraMedian(c *Cell, key string) string {
	return extraQuantile(c, key, false)
}

// probeFigure is what the latency probes table shows for a run: the p50 of the extra trend
// the catalogue names as the probe's figure (the first chunk of /stream, the first event of
// /sse: what a buffering proxy delays), its time to first byte when the run lacks that trend,
// and the whole request when the catalogue names none (/json, /upload).
func probeFigure(scenario string, r *Run) float64 {
	s, _ := scenarios.Lookup(scenario)
	if s.Figure == nil || s.Figure.Trend == "" {
		return r.P50
	}
	if st, ok := r.Extra[s.Figure.Trend]; ok {
		return st.P50
	}
	return r.TTFBP50
}

// probesWith are the names of the catalogue's probes for which has is true, in its order.
func probesWith(has func(scenarios.Scenario) bool) []string {
	var out []string
	for _, s := range scenarios.All() {
		if s.Mode == scenarios.Probe && has(s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// probeMedian is the median probe figure over the valid runs.
func probeMedian(c *Cell) (float64, bool) {
	var xs []float64
	for i := range c.Runs {
		if c.Runs[i].Valid {
			xs = append(xs, probeFigure(c.Scenario, &c.Runs[i]))
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return result.Summarize(xs).Median, true
}

// probeValue is a probe cell's entry in a wide table.
func probeValue(c *Cell) (string, string) {
	if c == nil {
		return "—", ""
	}
	if c.NoProto != "" {
		return c.NoProto, classNoProto
	}
	if v, ok := probeMedian(c); ok {
		if busy(c) {
			return ms(v) + "*", ""
		}
		return ms(v), ""
	}
	return "invalid", classInvalid
}

// busy tells whether a run of the cell saw outside load.
func busy(c *Cell) bool {
	return slices.ContainsFunc(c.Runs, func(r Run) bool { return r.OutsideLoad.Busy() })
}

// busyNote explains the * of a figure measured under outside load.
func busyNote() string {
	return fmt.Sprintf("* measured while processes other than the client, the target and the upstream used more than %.0f%% of the CPU: "+
		"the figure is the machine's as much as the target's.", verdict.OutsideLoadShare*100)
}

// wide lays cells of the given scenarios out as one row per target and one column per
// scenario × protocol present.
type wideCol struct{ scenario, proto string }

func (b *Bench) wideCols(scenarios ...string) []wideCol {
	var cols []wideCol
	for _, sc := range scenarios {
		var protos []string
		for _, c := range b.Cells {
			if c.Scenario == sc && !slices.Contains(protos, c.Proto) {
				protos = append(protos, c.Proto)
			}
		}
		sort.SliceStable(protos, func(i, j int) bool { return protoRank(protos[i]) < protoRank(protos[j]) })
		for _, p := range protos {
			cols = append(cols, wideCol{sc, p})
		}
	}
	return cols
}

func (b *Bench) find(scenario, target, proto string) *Cell {
	for i := range b.Cells {
		c := &b.Cells[i]
		if c.Scenario == scenario && c.Target == target && c.Proto == proto {
			return c
		}
	}
	return nil
}

func probeTable(b *Bench) table {
	names := probesWith(func(s scenarios.Scenario) bool { return s.Figure != nil })
	var says []string
	for _, n := range names {
		s, _ := scenarios.Lookup(n)
		says = append(says, s.Route+" "+s.Figure.Says)
	}
	t := table{
		ID: "probes", Title: "Latency probes",
		Intro: "p50 in ms over each probe's samples (median over runs): " + strings.Join(says, ", ") +
			". One virtual user, in sequence.",
		Empty: "No latency probes in this bench.",
	}
	cols := b.wideCols(names...)
	if len(cols) == 0 {
		return t
	}
	t.Head = []string{"target"}
	for _, c := range cols {
		t.Head = append(t.Head, "/"+c.scenario+" "+c.proto)
	}
	anyBusy := false
	for _, tg := range b.Targets() {
		r := row{Cells: []string{tg}}
		found := false
		for _, col := range cols {
			c := b.find(col.scenario, tg, col.proto)
			v, class := probeValue(c)
			found = found || c != nil
			anyBusy = anyBusy || (c != nil && class == "" && busy(c))
			if class == classInvalid {
				r.Class = classInvalid
			}
			r.Cells = append(r.Cells, v)
		}
		if found {
			t.Rows = append(t.Rows, r)
		}
	}
	if slices.ContainsFunc(cols, func(c wideCol) bool { return c.proto == "h3" }) {
		t.Notes = append(t.Notes, "HTTP/3 probes include QUIC connection setup by the probe client.")
	}
	if anyBusy {
		t.Notes = append(t.Notes, busyNote())
	}
	return t
}

// okFail counts a cell's samples that succeeded and failed, over every run (valid or not).
func okFail(c *Cell) string {
	var ok, fail float64
	for _, r := range c.Runs {
		ok += r.Requests - r.Failed
		fail += r.Failed
	}
	return fmt.Sprintf("%.0f / %.0f", ok, fail)
}

// perProtoTable is the SSE or WebSocket table: per target, per protocol: ok/fail and figures.
func perProtoTable(b *Bench, scenario string, figures []string, keys []string) ([]string, []row) {
	cols := b.wideCols(scenario)
	if len(cols) == 0 {
		return nil, nil
	}
	head := []string{"target"}
	for _, col := range cols {
		head = append(head, col.proto+" ok/fail")
		for _, f := range figures {
			head = append(head, col.proto+" "+f)
		}
	}
	var rows []row
	for _, tg := range b.Targets() {
		r := row{Cells: []string{tg}}
		found := false
		for _, col := range cols {
			c := b.find(scenario, tg, col.proto)
			switch {
			case c == nil:
				r.Cells = append(r.Cells, "—")
				for range figures {
					r.Cells = append(r.Cells, "—")
				}
				continue
			case c.NoProto != "":
				found = true
				r.Cells = append(r.Cells, c.NoProto)
				for range figures {
					r.Cells = append(r.Cells, "—")
				}
				continue
			}
			found = true
			r.Cells = append(r.Cells, okFail(c))
			if !c.Valid {
				r.Class = classInvalid
			}
			for _, k := range keys {
				r.Cells = append(r.Cells, extraMedian(c, k))
			}
		}
		if found {
			rows = append(rows, r)
		}
	}
	return head, rows
}

// detailsTables are the probes' own tables (scenarios/catalogue.json's details: sse, ws), in
// the catalogue's order: per target and protocol, ok/fail and each column's p50.
func detailsTables(b *Bench) []table {
	var out []table
	for _, n := range probesWith(func(s scenarios.Scenario) bool { return s.Details != nil }) {
		s, _ := scenarios.Lookup(n)
		t := table{ID: n, Title: s.Details.Title, Intro: s.Details.Intro, Empty: "No /" + n + " probe in this bench."}
		var labels, trends []string
		for _, c := range s.Details.Columns {
			labels, trends = append(labels, c.Label), append(trends, c.Trend)
		}
		t.Head, t.Rows = perProtoTable(b, n, labels, trends)
		out = append(out, t)
	}
	return out
}

// pacingTable is the streamed probes' longest gap between parts, per target and protocol:
// a stall is a figure, never a verdict (a busy machine makes one as a proxy can), and a gap
// measured while other processes took the CPU is marked so.
func pacingTable(b *Bench) table {
	names := probesWith(func(s scenarios.Scenario) bool { return s.Gap != nil })
	var parts []string
	for _, n := range names {
		s, _ := scenarios.Lookup(n)
		parts = append(parts, s.Route+": "+s.Gap.Says)
	}
	t := table{
		ID: "pacing", Title: "Streamed responses: the longest gap",
		Intro: "The longest gap between two parts of a response (" + strings.Join(parts, "; ") + "), " +
			"over every sample of every run, ms. A proxy that holds parts back and releases them together is invalid (its cell says why); " +
			"a stall, one late part and then the beat again, is only shown here: a busy machine makes one as a proxy can.",
		Empty: "No streamed probe in this bench.",
	}
	cols := b.wideCols(names...)
	if len(cols) == 0 {
		return t
	}
	t.Head = []string{"target"}
	for _, c := range cols {
		t.Head = append(t.Head, "/"+c.scenario+" "+c.proto)
	}
	anyBusy, stalled := false, false
	var sporadic []string
	for _, tg := range b.Targets() {
		r := row{Cells: []string{tg}}
		found := false
		for _, col := range cols {
			c := b.find(col.scenario, tg, col.proto)
			if c != nil {
				for _, run := range c.Runs {
					if s := run.Pacing.Sporadic(); s != "" {
						sporadic = append(sporadic, fmt.Sprintf("/%s %s %s: %s", col.scenario, col.proto, tg, s))
					}
				}
			}
			v, class, st, bz := gapValue(c)
			found = found || c != nil
			stalled, anyBusy = stalled || st, anyBusy || bz
			if class == classInvalid {
				r.Class = classInvalid
			}
			r.Cells = append(r.Cells, v)
		}
		if found {
			t.Rows = append(t.Rows, r)
		}
	}
	if stalled {
		t.Notes = append(t.Notes, "stalls: responses with a gap longer than the interval and its slack ("+stallLimits(b, names)+"): figures, not verdicts.")
	}
	t.Notes = append(t.Notes, sporadic...)
	if anyBusy {
		t.Notes = append(t.Notes, busyNote())
	}
	return t
}

// gapValue is a streamed probe cell's longest gap over its runs, with its stalls and a * when
// a run saw outside load; it also says whether any run stalled or was busy.
func gapValue(c *Cell) (v, class string, stalled, busyRun bool) {
	if c == nil {
		return "—", "", false, false
	}
	if c.NoProto != "" {
		return c.NoProto, classNoProto, false, false
	}
	longest, stalls, timed := 0.0, 0.0, false
	for _, r := range c.Runs {
		if s, ok := r.Extra[gapTrend(c.Scenario)]; ok {
			longest, timed = max(longest, s.Max), true
		}
		if r.Pacing != nil {
			stalls += r.Pacing.Stalls
		}
	}
	busyRun = busy(c)
	if !c.Valid {
		class = classInvalid
	}
	if !timed {
		if !c.Valid {
			return "invalid", class, false, busyRun
		}
		return "—", class, false, busyRun
	}
	v = ms(longest)
	if stalls > 0 {
		v += fmt.Sprintf(" (%.0f stalled)", stalls)
	}
	if busyRun {
		v += "*"
	}
	return v, class, stalls > 0, busyRun
}

// gapTrend is the extra trend of the gaps between a streamed probe's parts ("" for another).
func gapTrend(scenario string) string {
	if s, ok := scenarios.Lookup(scenario); ok && s.Gap != nil {
		return s.Gap.Trend
	}
	return ""
}

// stallLimits says over how long a gap counts as a stall in each streamed probe, as its runs
// recorded it (verdict.Pacing's StallOverMS): "/stream 75 ms, /sse 187.5 ms".
func stallLimits(b *Bench, names []string) string {
	var out []string
	for _, n := range names {
		for _, c := range b.Cells {
			if i := slices.IndexFunc(c.Runs, func(r Run) bool { return r.Pacing != nil }); c.Scenario == n && i >= 0 {
				s, _ := scenarios.Lookup(n)
				out = append(out, fmt.Sprintf("%s %g ms", s.Route, c.Runs[i].Pacing.StallOverMS))
				break
			}
		}
	}
	return strings.Join(out, ", ")
}
