package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// chart is a grouped bar chart: one group per category (a protocol, a scenario), one bar per
// series (a target) in each group, drawn as inline SVG.
type chart struct {
	ID     string
	Title  string
	YLabel string
	Log    bool     // logarithmic y axis (latencies spanning decades)
	Groups []string // x categories
	Series []string // targets, one <g class="series" data-target=…> each
	Values [][]bar  // [series][group]
	Legend []string // extra legend entries explaining the marks
}

// bar is one bar; Missing says why there is none ("no h3", "invalid").
type bar struct {
	V       float64
	Lo, Hi  float64 // whisker (min–max over runs); Hi 0: none
	Over    float64 // a pale bar behind, up to this value (p99 behind p50); 0: none
	Title   string  // tooltip
	Missing string
	Present bool
}

// Target colours: direct (the baseline) neutral, the others from a palette that stays
// distinct for colour-blind readers (Okabe–Ito, then Tableau).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#8C564B", "#F0E442", "#7F7F7F", "#17BECF"}

const directColor = "#4B5563"

// colors assigns each target its colour, the same in every chart.
func colors(targets []string) map[string]string {
	m := map[string]string{}
	i := 0
	for _, t := range targets {
		if t == "direct" {
			m[t] = directColor
			continue
		}
		m[t] = palette[i%len(palette)]
		i++
	}
	return m
}

const (
	chartW  = 960.0
	chartH  = 400.0
	marginL = 78.0
	marginR = 16.0
	marginT = 44.0
	marginB = 92.0
	maxBarW = 44.0
)

// plot is where a chart draws: the plot area's origin (bottom left), size, and the value → y
// mapping of its axis with the axis' ticks.
type plot struct {
	x0, y0, w, h float64
	ticks        []float64
	scale        func(v float64) float64
}

// svg renders the chart. Every text is escaped; the result is safe to embed as HTML.
func (c *chart) svg(col map[string]string) string {
	var sb strings.Builder
	e := html.EscapeString
	p := c.plot()
	fmt.Fprintf(&sb, `<svg class="chart" id="%s" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="%s-title" data-series="%d">`,
		e(c.ID), chartW, chartH, e(c.ID), len(c.Series))
	fmt.Fprintf(&sb, `<title id="%s-title">%s</title>`, e(c.ID), e(c.Title))
	fmt.Fprintf(&sb, `<text class="title" x="%.0f" y="24">%s</text>`, marginL, e(c.Title))
	c.writeAxes(&sb, p)
	c.writeBars(&sb, p, col)
	c.writeLegend(&sb, col)
	sb.WriteString(`</svg>`)
	return sb.String()
}

// plot fits the y axis to the chart's values: from 0, or on a log scale from the power of ten
// below the smallest value.
func (c *chart) plot() plot {
	p := plot{x0: marginL, w: chartW - marginL - marginR, h: chartH - marginT - marginB}
	p.y0 = marginT + p.h
	top := 0.0
	bottom := math.Inf(1)
	for _, s := range c.Values {
		for _, b := range s {
			if !b.Present {
				continue
			}
			top = math.Max(top, math.Max(b.V, math.Max(b.Hi, b.Over)))
			for _, v := range []float64{b.V, b.Lo, b.Over} {
				if v > 0 {
					bottom = math.Min(bottom, v)
				}
			}
		}
	}
	if math.IsInf(bottom, 1) { // nothing to draw: an empty frame
		bottom, top = 0.1, 1
	}
	if c.Log {
		lo := math.Pow(10, math.Floor(math.Log10(math.Max(bottom, 1e-3))))
		hi := math.Pow(10, math.Ceil(math.Log10(math.Max(top, lo*10))))
		for v := lo; v <= hi*1.0001; v *= 10 {
			p.ticks = append(p.ticks, v)
		}
		p.scale = func(v float64) float64 {
			if v <= lo {
				return p.y0
			}
			return p.y0 - p.h*(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
		}
		return p
	}
	step := niceStep(top / 5)
	hi := step * math.Ceil(top/step)
	if hi <= 0 {
		hi, step = 1, 0.2
	}
	for v := 0.0; v <= hi*1.0001; v += step {
		p.ticks = append(p.ticks, v)
	}
	p.scale = func(v float64) float64 { return p.y0 - p.h*math.Max(v, 0)/hi }
	return p
}

// writeAxes draws the grid and y axis, and the x axis with one label per group.
func (c *chart) writeAxes(sb *strings.Builder, p plot) {
	e := html.EscapeString
	sb.WriteString(`<g class="axis y">`)
	for _, v := range p.ticks {
		y := p.scale(v)
		fmt.Fprintf(sb, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, p.x0, p.x0+p.w, y, y)
		fmt.Fprintf(sb, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, p.x0-6, y, e(tickLabel(v)))
	}
	fmt.Fprintf(sb, `<line class="axisline" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, p.x0, p.x0, marginT, p.y0)
	fmt.Fprintf(sb, `<text class="label" transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, marginT+p.h/2, e(c.YLabel))
	sb.WriteString(`</g>`)
	sb.WriteString(`<g class="axis x">`)
	fmt.Fprintf(sb, `<line class="axisline" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, p.x0, p.x0+p.w, p.y0, p.y0)
	for gi, g := range c.Groups {
		fmt.Fprintf(sb, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, p.x0+c.groupW(p)*(float64(gi)+0.5), p.y0+18, e(g))
	}
	sb.WriteString(`</g>`)
}

func (c *chart) groupW(p plot) float64 { return p.w / float64(max(len(c.Groups), 1)) }

// writeBars draws one group element per series (target). Bars share 82% of their group, at
// most maxBarW wide each, centred in it.
func (c *chart) writeBars(sb *strings.Builder, p plot, col map[string]string) {
	e := html.EscapeString
	groupW := c.groupW(p)
	barW := math.Min(groupW*0.82/float64(max(len(c.Series), 1)), maxBarW)
	inner := barW * float64(len(c.Series))
	for si, s := range c.Series {
		fmt.Fprintf(sb, `<g class="series" data-target="%s" fill="%s">`, e(s), col[s])
		for gi := range c.Groups {
			b := c.Values[si][gi]
			x := p.x0 + groupW*float64(gi) + (groupW-inner)/2 + barW*float64(si)
			if !b.Present {
				if b.Missing != "" {
					fmt.Fprintf(sb, `<text class="missing" x="%.1f" y="%.1f" transform="rotate(-90 %.1f %.1f)">%s</text>`,
						x+barW/2+3, p.y0-4, x+barW/2+3, p.y0-4, e(b.Missing))
				}
				continue
			}
			if b.Over > 0 {
				y := p.scale(b.Over)
				fmt.Fprintf(sb, `<rect class="over" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill-opacity="0.3"><title>%s</title></rect>`,
					x+1, y, math.Max(barW-2, 1), math.Max(p.y0-y, 0.5), e(b.Title))
			}
			y := p.scale(b.V)
			fmt.Fprintf(sb, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
				x+1, y, math.Max(barW-2, 1), math.Max(p.y0-y, 0.5), e(b.Title))
			if barW >= 26 && b.Hi == 0 && b.Over == 0 {
				fmt.Fprintf(sb, `<text class="value" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x+barW/2, y-4, e(valueLabel(b.V)))
			}
			if b.Hi > 0 && b.Hi > b.Lo {
				cx := x + barW/2
				ylo, yhi := p.scale(b.Lo), p.scale(b.Hi)
				fmt.Fprintf(sb, `<path class="whisker" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f"/>`,
					cx, ylo, yhi, cx-3, yhi, cx+3, cx-3, ylo, cx+3)
			}
		}
		sb.WriteString(`</g>`)
	}
}

// writeLegend draws one swatch per target, then the marks' meaning, wrapping at the chart's edge.
func (c *chart) writeLegend(sb *strings.Builder, col map[string]string) {
	e := html.EscapeString
	sb.WriteString(`<g class="legend">`)
	lx, ly := marginL, chartH-36
	for _, s := range c.Series {
		w := 26 + 7.5*float64(len([]rune(s)))
		if lx+w > chartW-marginR {
			lx, ly = marginL, ly+18
		}
		fmt.Fprintf(sb, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`,
			lx, ly-10, col[s], lx+16, ly, e(s))
		lx += w
	}
	for _, l := range c.Legend {
		w := 20 + 6.5*float64(len([]rune(l)))
		if lx+w > chartW-marginR {
			lx, ly = marginL, ly+18
		}
		fmt.Fprintf(sb, `<text class="note" x="%.1f" y="%.1f">%s</text>`, lx+8, ly, e(l))
		lx += w
	}
	sb.WriteString(`</g>`)
}

// niceStep rounds a raw tick step up to 1, 2 or 5 × 10^k.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func tickLabel(v float64) string {
	switch {
	case v >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case v >= 1e3:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case v >= 1 || v == 0:
		return trimZero(fmt.Sprintf("%.1f", v))
	}
	return trimZero(fmt.Sprintf("%.3f", v))
}

// valueLabel is a bar's value, short enough to sit above it.
func valueLabel(v float64) string {
	switch {
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// charts builds the report's charts from the bench: req/s (reused, fresh), latency
// percentiles (reused), CPU µs per request.
func charts(b *Bench) []chart {
	var out []chart
	targets := b.Targets()
	for _, mode := range []string{"reused", "fresh"} {
		c := throughputChart(b, mode, targets)
		if c != nil {
			out = append(out, *c)
		}
	}
	if c := latencyChart(b, targets); c != nil {
		out = append(out, *c)
	}
	if c := cpuChart(b, targets); c != nil {
		out = append(out, *c)
	}
	return out
}

// modeProtos are the protocols of a mode's cells, in matrix order.
func modeProtos(b *Bench, mode string) []string {
	var protos []string
	for _, c := range b.Cells {
		if c.Mode == mode && !slices.Contains(protos, c.Proto) {
			protos = append(protos, c.Proto)
		}
	}
	slices.SortStableFunc(protos, func(a, c string) int { return protoRank(a) - protoRank(c) })
	return protos
}

func seriesOf(b *Bench, targets []string, pred func(c *Cell) bool) []string {
	var out []string
	for _, t := range targets {
		for _, c := range b.Cells {
			if c.Target == t && pred(&c) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// missing says why a cell has no bar.
func missing(c *Cell) bar {
	switch {
	case c == nil:
		return bar{}
	case c.NoProto != "":
		return bar{Missing: c.NoProto}
	default:
		return bar{Missing: "invalid"}
	}
}

func throughputChart(b *Bench, mode string, targets []string) *chart {
	protos := modeProtos(b, mode)
	if len(protos) == 0 {
		return nil
	}
	title := "Reused connections: req/s (median over runs)"
	if mode == "fresh" {
		title = "Fresh connections: req/s (median over runs)"
	}
	c := &chart{
		ID: "chart-" + mode, Title: title, YLabel: "requests / s", Groups: protoLabels(protos),
		Series: seriesOf(b, targets, func(c *Cell) bool { return c.Mode == mode }),
	}
	spread := false
	for _, t := range c.Series {
		var vals []bar
		for _, p := range protos {
			cell := b.findMode(mode, t, p)
			if cell == nil || !cell.Valid || cell.RPS.N == 0 {
				vals = append(vals, missing(cell))
				continue
			}
			bv := bar{
				V: cell.RPS.Median, Present: true,
				Title: fmt.Sprintf("%s %s: %s req/s (median of %d)", t, protoName(p), fmtInt(cell.RPS.Median), cell.RPS.N),
			}
			if cell.RPS.N > 1 {
				bv.Lo, bv.Hi = cell.RPS.Min, cell.RPS.Max
				spread = true
			}
			vals = append(vals, bv)
		}
		c.Values = append(c.Values, vals)
	}
	if spread {
		c.Legend = append(c.Legend, "whiskers: min–max over runs")
	}
	return c
}

func protoLabels(protos []string) []string {
	out := make([]string, len(protos))
	for i, p := range protos {
		out[i] = protoName(p)
	}
	return out
}

func (b *Bench) findMode(mode, target, proto string) *Cell {
	for i := range b.Cells {
		c := &b.Cells[i]
		if c.Mode == mode && c.Target == target && c.Proto == proto {
			return c
		}
	}
	return nil
}

func latencyChart(b *Bench, targets []string) *chart {
	protos := modeProtos(b, "reused")
	if len(protos) == 0 {
		return nil
	}
	c := &chart{
		ID: "chart-latency", Title: "Reused connections: latency p50 and p99 (ms, log scale)", YLabel: "ms (log)", Log: true,
		Groups: protoLabels(protos), Series: seriesOf(b, targets, func(c *Cell) bool { return c.Mode == "reused" }),
		Legend: []string{"solid: p50", "pale: p99"},
	}
	for _, t := range c.Series {
		var vals []bar
		for _, p := range protos {
			cell := b.findMode("reused", t, p)
			if cell == nil || !cell.Valid || cell.P50.N == 0 {
				vals = append(vals, missing(cell))
				continue
			}
			vals = append(vals, bar{
				V: cell.P50.Median, Over: cell.P99.Median, Present: true,
				Title: fmt.Sprintf("%s %s: p50 %s ms, p99 %s ms", t, protoName(p), ms(cell.P50.Median), ms(cell.P99.Median)),
			})
		}
		c.Values = append(c.Values, vals)
	}
	return c
}

func cpuChart(b *Bench, targets []string) *chart {
	var scenarios []string
	for _, c := range b.Cells {
		if isThroughput(&c) && c.Resources != nil && c.Valid && !slices.Contains(scenarios, c.Scenario) {
			scenarios = append(scenarios, c.Scenario)
		}
	}
	if len(scenarios) == 0 {
		return nil
	}
	c := &chart{
		ID: "chart-cpu", Title: "Target CPU per request (µs, whole process tree)", YLabel: "CPU µs / request", Groups: scenarios,
		Series: seriesOf(b, targets, func(c *Cell) bool { return isThroughput(c) && c.Resources != nil }),
	}
	bound := false
	for _, t := range c.Series {
		var vals []bar
		for _, sc := range scenarios {
			var cell *Cell
			for i := range b.Cells {
				if b.Cells[i].Scenario == sc && b.Cells[i].Target == t {
					cell = &b.Cells[i]
				}
			}
			if cell == nil || !cell.Valid || cell.Resources == nil {
				vals = append(vals, missing(cell))
				continue
			}
			r := cell.Resources
			title := fmt.Sprintf("%s %s: %.1f µs/request", t, sc, r.TargetCPUPerReqMicros)
			if r.ClientBound {
				title += " (client-bound)"
				bound = true
			}
			vals = append(vals, bar{V: r.TargetCPUPerReqMicros, Present: true, Title: title})
		}
		c.Values = append(c.Values, vals)
	}
	if bound {
		c.Legend = append(c.Legend, "client-bound cells: see the resources table")
	}
	return c
}
