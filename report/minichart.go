package report

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// miniChart is one small chart of the first screen: a horizontal bar per target with a
// figure, the baseline (direct) first, then the others sorted, lowest first; a target without
// a figure keeps its row, with a mark that says why (invalid, no h3, could not sustain it).
type miniChart struct {
	ID    string // HTML id, and the name of its file beside report.md
	Title string
	Rows  []miniRow
	Note  string // a line under the rows: what holds for the whole chart
}

// miniRow is one target's row.
type miniRow struct {
	Target   string
	V        float64
	Bar      bool   // V is a figure to draw
	Value    string // the figure as text, after the bar
	Mark     string // what to read the row with: "client-bound", "invalid", "no h3", …
	Kind     string // the mark's kind: markBound, markInvalid, markMuted
	Link     string // where the mark's reason is ("#invalid-…"), in the page only
	Baseline bool
	Tip      string // the row's tooltip, when it says more than its text
}

// Kinds of marks, each with its colour (the tables' row classes').
const (
	markBound   = "bound"   // a figure to read with care: client-bound, could not sustain it
	markInvalid = "invalid" // no figure: a run failed its checks
	markMuted   = "muted"   // no figure, and nothing wrong: not run, not sampled
)

var markColor = map[string]string{markBound: "#b54708", markInvalid: "#b42318", markMuted: "#52606d"}

// file is the chart's file beside report.md.
func (m *miniChart) file() string { return m.ID + ".svg" }

// sortRows puts the baseline first, then the rows with a bar, lowest first, then the rows
// without one: a result first (could not sustain it), then the invalid, then those not run or
// not sampled, each in the order they came (the bench's target order).
func sortRows(rows []miniRow) []miniRow {
	var base, bars, rest []miniRow
	for _, r := range rows {
		switch {
		case r.Baseline:
			base = append(base, r)
		case r.Bar:
			bars = append(bars, r)
		default:
			rest = append(rest, r)
		}
	}
	// stable: equal figures keep the bench's order
	slices.SortStableFunc(bars, func(a, b miniRow) int { return cmp.Compare(a.V, b.V) })
	kind := map[string]int{markBound: 0, markInvalid: 1, markMuted: 2}
	slices.SortStableFunc(rest, func(a, b miniRow) int { return cmp.Compare(kind[a.Kind], kind[b.Kind]) })
	return append(append(base, bars...), rest...)
}

const (
	miniW      = 320.0
	miniRowH   = 17.0
	miniTop    = 22.0 // the title's line
	miniBarH   = 11.0
	miniNoteH  = 15.0 // a line of the note
	miniCharW  = 6.0  // DejaVu Sans at 11 px: 5.3 to 6.4 a letter, 7 a digit
	miniFont   = `font-family="DejaVu Sans, Arial, sans-serif"`
	miniMinBar = 0.3 // of the room right of the labels: the longest bar is at least this long
)

// value is the row's figure as written after its bar: the baseline says it is.
func (r *miniRow) value() string {
	if r.Baseline && r.Bar {
		return r.Value + " (baseline)"
	}
	return r.Value
}

// text is what a row writes right of its bar (or, without one, right of its label).
func (r *miniRow) text() string {
	return strings.Join(nonEmpty(r.value(), r.Mark), markSep)
}

const markSep = " · "

func textW(s string) float64 { return miniCharW * float64(len([]rune(s))) }

// height is the chart's height in its own units.
func (m *miniChart) height() float64 {
	return miniTop + miniRowH*float64(len(m.Rows)) + 6 + miniNoteH*float64(len(m.noteLines()))
}

// noteLines is the note broken at spaces into lines that fit the chart (a tenth spare: italic
// letters run wider than textW's mean): one line would be cut at its edge.
func (m *miniChart) noteLines() []string {
	var lines []string
	for _, w := range strings.Fields(m.Note) {
		if n := len(lines); n > 0 && textW(lines[n-1]+" "+w) <= 0.9*miniW {
			lines[n-1] += " " + w
			continue
		}
		lines = append(lines, w)
	}
	return lines
}

// svg draws the chart; every text is escaped. standalone makes it a file of its own (an
// xmlns, no links: an image beside report.md); otherwise it is inline in report.html, where
// a mark's link goes to its reason.
func (m *miniChart) svg(col map[string]string, standalone bool) string {
	e := html.EscapeString
	var sb strings.Builder
	h := m.height()
	ns := ""
	if standalone {
		ns = ` xmlns="http://www.w3.org/2000/svg"`
	}
	fmt.Fprintf(&sb, `<svg%s class="mini" id="%s" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-labelledby="%s-title" %s font-size="11" data-rows="%d">`,
		ns, e(m.ID), miniW, h, miniW, h, e(m.ID), miniFont, len(m.Rows))
	fmt.Fprintf(&sb, `<title id="%s-title">%s</title>`, e(m.ID), e(m.Title))
	fmt.Fprintf(&sb, `<rect width="%.0f" height="%.0f" fill="#ffffff"/>`, miniW, h)
	fmt.Fprintf(&sb, `<text x="0" y="13" font-size="12" font-weight="600" fill="#1f2933">%s</text>`, e(m.Title))

	labelW := 48.0
	for _, r := range m.Rows {
		labelW = math.Max(labelW, textW(r.Target)+10)
	}
	labelW = math.Min(labelW, 120)
	scale := m.scale(labelW)
	// the baseline's figure as a dashed line down the rows, behind them and broken where a
	// row's text is: each row's length against it at a glance
	for _, base := range m.Rows {
		if !base.Baseline || !base.Bar || len(m.Rows) < 2 {
			continue
		}
		bx := labelW + math.Max(base.V*scale, 1)
		for i, r := range m.Rows {
			if r.Baseline {
				continue
			}
			start := labelW + 4
			if r.Bar {
				start += math.Max(r.V*scale, 1)
			}
			if t := r.text(); t != "" && bx >= start-2 && bx <= start+textW(t)+2 {
				continue
			}
			y := miniTop + miniRowH*float64(i)
			fmt.Fprintf(&sb, `<line class="baseline" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#4B5563" stroke-width="1" stroke-dasharray="2 2"/>`,
				bx, bx, y, y+miniRowH)
		}
	}
	for i, r := range m.Rows {
		y := miniTop + miniRowH*float64(i)
		fill := col[r.Target]
		fmt.Fprintf(&sb, `<g class="row" data-target="%s" data-bar="%t">`, e(r.Target), r.Bar)
		if tip := r.Tip; tip != "" || r.text() != "" {
			if tip == "" {
				tip = r.Target + ": " + r.text()
			}
			fmt.Fprintf(&sb, `<title>%s</title>`, e(tip))
		}
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#1f2933">%s</text>`, labelW-6, y+miniBarH-1.5, e(r.Target))
		x := labelW
		if r.Bar {
			w := math.Max(r.V*scale, 1)
			// a figure to read with care: paler, outlined in the mark's colour
			style := fmt.Sprintf(`fill="%s"`, fill)
			if r.Kind == markBound {
				style += fmt.Sprintf(` fill-opacity="0.45" stroke="%s" stroke-width="1.2" stroke-dasharray="3 2"`, markColor[markBound])
			}
			fmt.Fprintf(&sb, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.0f" %s/>`, x, y+1, w, miniBarH, style)
			x += w
		}
		// one text: the browser puts the mark right after the figure, whatever the font
		if r.text() != "" {
			mark := ""
			if r.Mark != "" {
				mark = fmt.Sprintf(`<tspan class="mark %s" fill="%s" font-style="italic">%s</tspan>`, e(r.Kind), markColor[r.Kind], e(r.Mark))
				if r.Link != "" && !standalone {
					mark = fmt.Sprintf(`<a href="%s" text-decoration="underline">%s</a>`, e(r.Link), mark)
				}
			}
			fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" fill="#1f2933">%s</text>`, x+4, y+miniBarH-1.5, strings.Join(nonEmpty(e(r.value()), mark), markSep))
		}
		sb.WriteString(`</g>`)
	}
	notes := m.noteLines()
	for i, line := range notes {
		fmt.Fprintf(&sb, `<text class="note" x="0" y="%.1f" fill="#52606d" font-style="italic">%s</text>`, h-8-miniNoteH*float64(len(notes)-1-i), e(line))
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// scale is the chart's units per figure: as large as lets every bar's text fit after it, but
// the longest bar no shorter than miniMinBar of the room (a long mark then runs to the edge).
func (m *miniChart) scale(labelW float64) float64 {
	room := miniW - labelW
	top := 0.0
	s := math.Inf(1)
	for _, r := range m.Rows {
		if !r.Bar || r.V <= 0 {
			continue
		}
		top = math.Max(top, r.V)
		s = math.Min(s, (room-8-textW(r.text()))/r.V)
	}
	if top == 0 {
		return 0
	}
	return math.Max(s, miniMinBar*room/top)
}
