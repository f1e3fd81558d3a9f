package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// curve is a line chart: one line per series (a target) through its points, x and y on linear
// or log scales, drawn as inline SVG. The report's curves (p99 against offered rate, and the
// sweeps' figures against connections or body size) are curves.
type curve struct {
	ID, Title      string
	XLabel, YLabel string
	LogX, LogY     bool
	Lines          []curveLine
	// Goal is a horizontal line at this y (a latency goal), labelled GoalLabel; 0: none.
	Goal      float64
	GoalLabel string
}

// curveLine is one series' points, in x order when drawn; Mark, when set, is the point that
// line is read at (a capacity: its knee), drawn ringed with MarkLabel.
type curveLine struct {
	Series    string
	Points    []curvePoint
	Mark      *curvePoint
	MarkLabel string
}

// curvePoint is one point; Open draws it hollow (a step that did not hold). Gap is a point with
// no figure to draw (an invalid run, whose figure must not count): hollow on the x axis, its Y
// ignored, and its line broken there, so that no line passes through a figure nobody measured.
type curvePoint struct {
	X, Y  float64
	Open  bool
	Gap   bool
	Title string // tooltip
}

const (
	curveW       = 720.0
	curveH       = 380.0
	curveLegendW = 150.0
)

// axis maps values to pixels over [lo, hi], linearly or in decades, with its ticks.
type axis struct {
	lo, hi float64
	log    bool
	ticks  []float64
}

func newAxis(vals []float64, log bool) axis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if log && v <= 0 {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	a := axis{log: log}
	if log {
		a.lo = math.Pow(10, math.Floor(math.Log10(lo)))
		a.hi = math.Pow(10, math.Ceil(math.Log10(math.Max(hi, a.lo*10))))
		for v := a.lo; v <= a.hi*1.0001; v *= 10 {
			a.ticks = append(a.ticks, v)
			if a.hi/a.lo <= 100 { // few decades: the 2s and 5s too
				for _, m := range []float64{2, 5} {
					if v*m < a.hi {
						a.ticks = append(a.ticks, v*m)
					}
				}
			}
		}
		slices.Sort(a.ticks)
		return a
	}
	step := niceStep(math.Max(hi, 1e-9) / 5)
	a.lo, a.hi = 0, step*math.Ceil(hi/step)
	for v := 0.0; v <= a.hi*1.0001; v += step {
		a.ticks = append(a.ticks, v)
	}
	return a
}

// at is where v falls along a length of n pixels, from 0.
func (a axis) at(v, n float64) float64 {
	if a.log {
		v = math.Max(v, a.lo)
		return n * (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	}
	return n * (v - a.lo) / (a.hi - a.lo)
}

// svg renders the curve. Every text is escaped; the result is safe to embed as HTML, and
// standalone adds the XML namespace a file of its own needs.
func (c *curve) svg(col map[string]string, standalone bool) string {
	var xs, ys []float64
	for _, l := range c.Lines {
		for _, p := range l.Points {
			xs = append(xs, p.X)
			if !p.Gap {
				ys = append(ys, p.Y)
			}
		}
	}
	if c.Goal > 0 {
		ys = append(ys, c.Goal)
	}
	ax, ay := newAxis(xs, c.LogX), newAxis(ys, c.LogY)
	x0, y0 := marginL, curveH-56.0
	w, h := curveW-marginL-curveLegendW, y0-marginT
	px := func(v float64) float64 { return x0 + ax.at(v, w) }
	py := func(v float64) float64 { return y0 - ay.at(v, h) }
	e := html.EscapeString
	var sb strings.Builder
	ns := ""
	if standalone {
		ns = ` xmlns="http://www.w3.org/2000/svg"`
	}
	fmt.Fprintf(&sb, `<svg%s class="curve" id="%s" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="%s-title" data-series="%d" font-family="sans-serif" font-size="12">`,
		ns, e(c.ID), curveW, curveH, e(c.ID), len(c.Lines))
	fmt.Fprintf(&sb, `<title id="%s-title">%s</title>`, e(c.ID), e(c.Title))
	fmt.Fprintf(&sb, `<text class="title" x="%.0f" y="24" font-weight="bold">%s</text>`, marginL, e(c.Title))
	for _, t := range ay.ticks {
		y := py(t)
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e7eb"/>`, x0, y, x0+w, y)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#4b5563">%s</text>`, x0-6, y+4, e(tickLabel(t)))
	}
	for _, t := range ax.ticks {
		x := px(t)
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f3f4f6"/>`, x, marginT, x, y0)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#4b5563">%s</text>`, x, y0+16, e(tickLabel(t)))
	}
	fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#111827">%s</text>`, x0+w/2, y0+38, e(c.XLabel))
	fmt.Fprintf(&sb, `<text x="16" y="%.1f" text-anchor="middle" fill="#111827" transform="rotate(-90 16 %.1f)">%s</text>`, marginT+h/2, marginT+h/2, e(c.YLabel))
	if c.Goal > 0 {
		y := py(c.Goal)
		fmt.Fprintf(&sb, `<line class="goal" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#b91c1c" stroke-dasharray="6 4"/>`, x0, y, x0+w, y)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" fill="#b91c1c" text-anchor="end">%s</text>`, x0+w, y-4, e(c.GoalLabel))
	}
	for i, l := range c.Lines {
		color := col[l.Series]
		pts := slices.Clone(l.Points)
		slices.SortFunc(pts, func(a, b curvePoint) int { return cmpFloat(a.X, b.X) })
		fmt.Fprintf(&sb, `<g class="series" data-target="%s">`, e(l.Series))
		var path []string
		line := func() {
			if len(path) > 1 {
				fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, color, strings.Join(path, " "))
			}
			path = path[:0]
		}
		for _, p := range pts {
			if p.Gap {
				line()
				continue
			}
			path = append(path, fmt.Sprintf("%.1f,%.1f", px(p.X), py(p.Y)))
		}
		line()
		for _, p := range pts {
			fill, cls, y := color, "point", py(p.Y)
			if p.Open || p.Gap {
				fill = "#ffffff"
			}
			if p.Gap {
				cls, y = "gap", y0
			}
			fmt.Fprintf(&sb, `<circle class="%s" cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`,
				cls, px(p.X), y, fill, color, e(p.Title))
		}
		if m := l.Mark; m != nil {
			fmt.Fprintf(&sb, `<circle class="mark" cx="%.1f" cy="%.1f" r="8" fill="none" stroke="%s" stroke-width="2"><title>%s</title></circle>`,
				px(m.X), py(m.Y), color, e(l.MarkLabel))
		}
		ly := marginT + 8 + float64(i)*18
		fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`, curveW-curveLegendW+12, ly-10, color)
		label := l.Series
		if l.MarkLabel != "" {
			label += " " + l.MarkLabel
		}
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" fill="#111827">%s</text></g>`, curveW-curveLegendW+30, ly, e(label))
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// file is the name of the curve's SVG beside report.md.
func (c *curve) file() string { return c.ID + ".svg" }
