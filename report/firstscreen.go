package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
)

// glance is the report's first screen, what a person sees in ten seconds: how many cells are
// valid (and links to why the others are not), the one caveat every figure carries, and per
// protocol two small charts of what the client cannot distort (each target's own CPU per
// request over reused connections, its p99 at the equal-load pass's rate) with a line naming
// the cheapest targets and those that could not sustain the rate.
type glance struct {
	Valid, Cells int          // cells that ran (the matrix's, and equal load's per target and protocol), valid ones
	Invalid      []glanceLink // the cells not valid, each to its first reason
	NotRun       int          // cells whose target lacks the protocol
	Unreadable   int          // result files the rebuild could not read
	Caveat       string
	Protos       []glanceProto
}

// glanceLink is an invalid cell's name and the anchor of its reason.
type glanceLink struct{ Name, ID string }

// glanceProto is one protocol's column.
type glanceProto struct {
	Proto, Name string
	Cost        miniChart
	P99         *miniChart // nil: no equal-load pass over the protocol
	Equal       equalSummary
	Line        string
}

// equalSummary is what the protocol's line says of its equal-load pass.
type equalSummary struct {
	Rate      float64
	Over      []string // the targets that could not sustain it ("caddy", "h2o (in 1 of 3 runs)")
	Ranked    bool     // some target has a p99 at it
	NotJudged bool     // the client could not hold it
}

// maxLinks is how many invalid cells the first screen names; the rest are counted, and listed
// under "Invalid cells".
const maxLinks = 6

func firstScreen(b *Bench) glance {
	g := glance{Caveat: caveat(b), Unreadable: len(b.Unreadable)}
	for _, c := range b.Cells {
		if c.NoProto != "" {
			g.NotRun++
			continue
		}
		g.Cells++
		if c.Valid {
			g.Valid++
			continue
		}
		g.Invalid = append(g.Invalid, glanceLink{Name: cellName(&c), ID: invalidAnchor(c.Scenario, c.Proto, c.Target)})
	}
	// equal load: a target over a protocol is one cell, valid when every run of it is
	type key struct{ target, proto string }
	var order []key
	valid := map[key]bool{}
	for _, e := range b.EqualLoad {
		k := key{e.Target, e.Proto}
		if _, ok := valid[k]; !ok {
			order = append(order, k)
			valid[k] = true
		}
		valid[k] = valid[k] && e.Valid
	}
	for _, k := range order {
		g.Cells++
		if valid[k] {
			g.Valid++
			continue
		}
		g.Invalid = append(g.Invalid, glanceLink{Name: "equal-load " + k.proto + " " + k.target, ID: invalidAnchor("equal-load", k.proto, k.target)})
	}
	// the body-size sweep: every point is a cell
	for _, c := range b.Bodies {
		switch {
		case c.NoProto != "":
			g.NotRun++
		case c.Valid:
			g.Cells++
			g.Valid++
		default:
			g.Cells++
			g.Invalid = append(g.Invalid, glanceLink{Name: c.name(), ID: c.anchor()})
		}
	}
	for _, p := range glanceProtos(b) {
		gp := glanceProto{Proto: p, Name: protoName(p), Cost: costChart(b, p)}
		gp.P99, gp.Equal = p99Chart(b, p)
		gp.Line = glanceLine(&gp)
		g.Protos = append(g.Protos, gp)
	}
	return g
}

// cellName is a cell as the first screen names it: "reused-h2 caddy", "json h2 caddy".
func cellName(c *Cell) string {
	if strings.HasSuffix(c.Scenario, "-"+c.Proto) {
		return c.Scenario + " " + c.Target
	}
	return c.Scenario + " " + c.Proto + " " + c.Target
}

// glanceProtos are the protocols of the reused cells and of the equal-load pass, in the
// report's order.
func glanceProtos(b *Bench) []string {
	var out []string
	for _, p := range protoOrder {
		ran := slices.ContainsFunc(b.Cells, func(c Cell) bool { return c.Mode == "reused" && c.Proto == p }) ||
			slices.ContainsFunc(b.EqualLoad, func(e EqualLoadCell) bool { return e.Proto == p })
		if ran {
			out = append(out, p)
		}
	}
	return out
}

// ValidText is the count of valid cells as the first screen says it.
func (g glance) ValidText() string { return fmt.Sprintf("%d of %d cells valid", g.Valid, g.Cells) }

// Links are the invalid cells the first screen names; More counts the others.
func (g glance) Links() []glanceLink { return g.Invalid[:min(len(g.Invalid), maxLinks)] }
func (g glance) More() int           { return max(len(g.Invalid)-maxLinks, 0) }

// caveat is the one line every figure is read with: the CPUs the client shares with the
// targets, and the cells where it was the client's ceiling that was measured.
func caveat(b *Bench) string {
	var bound []string
	for _, c := range b.cellsOf(isThroughput) {
		if c.Valid && c.Resources != nil && c.Resources.ClientBound {
			bound = append(bound, cellName(c))
		}
	}
	line := shareLine(b)
	switch {
	case len(bound) == 0:
		return line + " No cell was client-bound."
	case len(bound) <= 3:
		return line + " Client-bound (the req/s is k6's ceiling, not the target's): " + strings.Join(bound, ", ") + "."
	}
	return line + fmt.Sprintf(" %d cells client-bound (the req/s is k6's ceiling, not the target's), marked in the charts and tables.", len(bound))
}

// costChart is each target's own CPU per request over the protocol's reused cells.
func costChart(b *Bench, proto string) miniChart {
	m := miniChart{ID: "glance-" + proto + "-cpu", Title: "Target CPU per request, µs (reused)"}
	for _, t := range b.Targets() {
		if c := b.findMode("reused", t, proto); c != nil {
			m.Rows = append(m.Rows, costRow(c))
		}
	}
	m.Rows = sortRows(m.Rows)
	return m
}

func costRow(c *Cell) miniRow {
	r := miniRow{Target: c.Target, Baseline: c.Target == "direct"}
	switch res := c.Resources; {
	case c.NoProto != "":
		r.Mark, r.Kind = c.NoProto, markMuted
	case !c.Valid:
		r.Mark, r.Kind, r.Link = "invalid", markInvalid, "#"+invalidAnchor(c.Scenario, c.Proto, c.Target)
	case res == nil || res.TargetCPUPerReqMicros <= 0:
		r.Mark, r.Kind = "not sampled", markMuted
	default:
		r.V, r.Bar, r.Value = res.TargetCPUPerReqMicros, true, fmt.Sprintf("%.0f µs", res.TargetCPUPerReqMicros)
		switch {
		case res.ClientBound:
			r.Mark, r.Kind = "client-bound", markBound
		case res.OutsideLoad:
			r.Mark, r.Kind = "outside load", markBound
		}
	}
	return r
}

// p99Chart is each target's p99 at the equal-load pass's rate over the protocol (the median
// over its valid runs that sustained it), as the headline reads the pass (equalLoadLines).
func p99Chart(b *Bench, proto string) (*miniChart, equalSummary) {
	type runs struct {
		p99, lag                     []float64
		invalid, overload, notJudged int
	}
	by := map[string]*runs{}
	rate := 0.0
	for _, e := range b.EqualLoad {
		if e.Proto != proto {
			continue
		}
		r := by[e.Target]
		if r == nil {
			r = &runs{}
			by[e.Target] = r
		}
		if rate == 0 || e.Valid {
			rate = e.RateRPS
		}
		switch {
		case !e.Valid:
			r.invalid++
		case e.ClientBound:
			r.notJudged++ // the client could not hold the rate: not the target's
		case e.Overload != "":
			r.overload++
		default:
			r.p99 = append(r.p99, e.P99)
			r.lag = append(r.lag, e.StartLagP99)
		}
	}
	var sum equalSummary
	if len(by) == 0 {
		return nil, sum
	}
	sum.Rate = rate
	m := &miniChart{ID: "glance-" + proto + "-p99", Title: fmt.Sprintf("p99 at %s req/s, ms (equal load)", fmtInt(rate))}
	for _, t := range b.Targets() {
		r := by[t]
		if r == nil {
			if c := b.findMode("reused", t, proto); c != nil && c.NoProto != "" {
				m.Rows = append(m.Rows, miniRow{Target: t, Baseline: t == "direct", Mark: c.NoProto, Kind: markMuted})
			}
			continue
		}
		row := miniRow{Target: t, Baseline: t == "direct"}
		runs := len(r.p99) + r.overload
		switch {
		case len(r.p99) > 0:
			row.V, row.Bar = result.Summarize(r.p99).Median, true
			row.Value = ms(row.V) + " ms"
			sum.Ranked = true
			if r.overload > 0 {
				row.Mark, row.Kind = fmt.Sprintf("not sustained in %d of %d runs", r.overload, runs), markBound
				sum.Over = append(sum.Over, fmt.Sprintf("%s (in %d of %d runs)", t, r.overload, runs))
			}
		case r.overload > 0:
			row.Mark, row.Kind = "could not sustain it", markBound
			sum.Over = append(sum.Over, t)
		case r.notJudged > 0:
			row.Mark, row.Kind = "not judged", markMuted
			sum.NotJudged = true
		}
		if r.invalid > 0 {
			mark := "invalid"
			if row.Mark != "" || row.Bar {
				mark = fmt.Sprintf("%d of %d runs invalid", r.invalid, r.invalid+runs+r.notJudged)
			}
			row.Mark = strings.Join(nonEmpty(row.Mark, mark), markSep)
			row.Kind, row.Link = markInvalid, "#"+invalidAnchor("equal-load", proto, t)
		}
		m.Rows = append(m.Rows, row)
	}
	m.Rows = sortRows(m.Rows)
	// "≈": two p99s the measurement cannot order (p99Tie), said as the headline says them
	for i := 1; i < len(m.Rows); i++ {
		prev, cur := &m.Rows[i-1], &m.Rows[i]
		if prev.Baseline || !prev.Bar || !cur.Bar {
			continue
		}
		if p99Tie(by[prev.Target].p99, by[cur.Target].p99, by[prev.Target].lag, by[cur.Target].lag) {
			cur.Value = "≈ " + cur.Value
			cur.Tip = fmt.Sprintf("%s: %s, not told apart from %s: %s", cur.Target, cur.text(), prev.Target, tieMeaning)
		}
	}
	if sum.NotJudged {
		m.Note = "direct could not sustain it: the client could not hold the rate"
	}
	return m, sum
}

// glanceLine is the protocol's line under its charts: the cheapest targets, and those that
// could not sustain the equal load.
func glanceLine(g *glanceProto) string {
	var parts, cheap []string
	n := 0
	for _, r := range g.Cost.Rows {
		if r.Bar && !r.Baseline {
			n++
			if len(cheap) < 3 {
				cheap = append(cheap, r.Target+" "+r.Value)
			}
		}
	}
	switch {
	case n == 1:
		parts = append(parts, "CPU per request: "+cheap[0]+".")
	case n > len(cheap):
		parts = append(parts, fmt.Sprintf("Cheapest of %d: %s.", n, strings.Join(cheap, ", ")))
	case n > 0:
		parts = append(parts, "Cheapest: "+strings.Join(cheap, ", ")+".")
	}
	e := g.Equal
	rate := fmtInt(e.Rate) + " req/s"
	switch {
	case g.P99 == nil:
	case len(e.Over) > 0:
		parts = append(parts, "Could not sustain "+rate+": "+strings.Join(e.Over, ", ")+".")
	case e.Ranked:
		parts = append(parts, "Every target sustained "+rate+".")
	case e.NotJudged:
		parts = append(parts, "The client could not hold "+rate+": no target ranked.")
	}
	return strings.Join(parts, " ")
}

// charts are the first screen's charts, in order.
func (g glance) charts() []*miniChart {
	var out []*miniChart
	for i := range g.Protos {
		out = append(out, &g.Protos[i].Cost)
		if g.Protos[i].P99 != nil {
			out = append(out, g.Protos[i].P99)
		}
	}
	return out
}
