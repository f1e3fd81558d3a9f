package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/internal/calibrate"
)

// CapacityCell is one target's capacity over one protocol: the highest rate of the native open
// model it held with its p99 within the goal (engine's capacity search), and every step tried.
type CapacityCell struct {
	Target string  `json:"target"`
	Proto  string  `json:"proto"`
	GoalMS float64 `json:"goal_ms"`
	// Rate is the highest rate held, 0 when none was down to the search's floor ("no capacity
	// at this goal"); P99 the p99 it held with.
	Rate int     `json:"rate"`
	P99  float64 `json:"p99_ms"`
	// AtCeiling: the target still held at Ceiling, the most the client proved it can send
	// (CeilingFrom says how it was found): its capacity is at least Rate.
	AtCeiling   bool           `json:"at_ceiling,omitempty"`
	Ceiling     int            `json:"ceiling,omitempty"`
	CeilingFrom string         `json:"ceiling_from,omitempty"`
	Steps       []CapacityStep `json:"steps"`
	Err         string         `json:"error,omitempty"` // the search did not end (interrupted)
}

// CapacityStep is one rate the search tried, judged (verdict.Held), and its result file,
// relative to the bench's folder (the equal-load pass's run, or one under capacity/).
type CapacityStep struct {
	calibrate.SearchStep
	File string `json:"file,omitempty"`
}

// CapacityDir is the folder of a capacity search's step results, beside the cells': every step
// is an equal-load run, kept, but none is a cell of the bench.
const CapacityDir = "capacity"

// How the client's ceiling that bounds a capacity search was found.
const (
	CeilingCalibrate = "the client's ceiling (make calibrate's open ladder)"
	CeilingDirect    = "direct's capacity (the client and the upstream alone)"
)

// AddCapacity adds one target's search.
func (b *Bench) AddCapacity(c CapacityCell) {
	b.Capacity = append(b.Capacity, c)
}

// CapacityText is a cell's capacity as the tables and the headline say it.
func (c CapacityCell) CapacityText() string {
	switch {
	case c.Err != "":
		return "—"
	case c.Rate == 0:
		return "none at this goal"
	case c.AtCeiling:
		return "≥ " + fmtInt(float64(c.Rate))
	}
	return fmtInt(float64(c.Rate))
}

// capacityProtos are the protocols the bench searched, in the report's order.
func capacityProtos(b *Bench) []string {
	var out []string
	for _, p := range protoOrder {
		if slices.ContainsFunc(b.Capacity, func(c CapacityCell) bool { return c.Proto == p }) {
			out = append(out, p)
		}
	}
	return out
}

// capacitySorted are the cells of proto, highest capacity first (direct, the baseline, first),
// those with none last.
func capacitySorted(b *Bench, proto string) []CapacityCell {
	var cells []CapacityCell
	for _, c := range b.Capacity {
		if c.Proto == proto {
			cells = append(cells, c)
		}
	}
	slices.SortStableFunc(cells, func(x, y CapacityCell) int {
		switch {
		case (x.Target == "direct") != (y.Target == "direct"):
			return map[bool]int{true: -1, false: 1}[x.Target == "direct"]
		case x.Rate != y.Rate:
			return y.Rate - x.Rate
		}
		return 0
	})
	return cells
}

// capacityLines are the headline's capacities: per protocol, every target's highest rate held
// within the goal, highest first.
func capacityLines(b *Bench) []headLine {
	var out []headLine
	for _, p := range capacityProtos(b) {
		cells := capacitySorted(b, p)
		goal := cells[0].GoalMS
		topic := "Capacity at p99 ≤ goal, " + protoName(p)
		var parts []string
		bound := ""
		for _, c := range cells {
			parts = append(parts, fmt.Sprintf("%s %s", c.Target, c.CapacityText()))
			if c.AtCeiling && bound == "" {
				bound = fmt.Sprintf(" (≥: held at %s req/s, %s)", fmtInt(float64(c.Ceiling)), c.CeilingFrom)
			}
		}
		out = append(out, headLine{Topic: topic, Text: fmt.Sprintf("%s (%g ms): %s req/s%s", topic, goal, strings.Join(parts, "; "), bound)})
	}
	return out
}

// capacityTable is every target's capacity per protocol, with how the search got there.
func capacityTable(b *Bench) table {
	t := table{
		ID: "capacity", Title: "Capacity at a latency goal",
		Intro: "The highest rate of the open model (requests due on a fixed schedule, latency from when each was due) each target holds with its p99 within the goal: " +
			"from the equal-load rate, doubled while a step holds, then bisected to within 5%. A step holds when its run is valid, no more than 1% of its requests fell behind schedule and its p99 is within the goal; each step is DURATION long. " +
			"A step that failed in doubt (its p99 alone over the goal by less than half of it, or other processes' load over the machine's share while it ran) is tried twice more, and the majority of the three decides: one noisy step does not bound the search. " +
			"The client's ceiling bounds the search: a target still holding there reads ≥, never a rate above what the client proved it can send.",
		Head:  []string{"protocol", "target", "capacity req/s", "p99 at it ms", "vs direct", "steps", "bounded by"},
		Empty: "No capacity search in this bench (MODES=capacity).",
	}
	for _, p := range capacityProtos(b) {
		cells := capacitySorted(b, p)
		direct := 0
		for _, c := range cells {
			if c.Target == "direct" && !c.AtCeiling {
				direct = c.Rate
			}
		}
		for _, c := range cells {
			p99, vs := "—", "—"
			if c.Rate > 0 {
				p99 = ms(c.P99)
			}
			switch {
			case c.Target == "direct":
				vs = "baseline"
			case direct > 0 && c.Rate > 0:
				vs = fmt.Sprintf("%.0f%%", 100*float64(c.Rate)/float64(direct))
			}
			bound := "—"
			if c.Ceiling > 0 {
				bound = fmt.Sprintf("%s at %s req/s", c.CeilingFrom, fmtInt(float64(c.Ceiling)))
			}
			class := ""
			switch {
			case c.Target == "direct":
				class = classBaseline
			case c.AtCeiling:
				class = classBound
			case c.Rate == 0:
				class = classInvalid
			}
			t.Rows = append(t.Rows, row{Class: class, Cells: []string{protoName(p), c.Target, c.CapacityText(), p99, vs, stepsText(c), bound}})
		}
	}
	if len(t.Rows) > 0 {
		t.Notes = append(t.Notes, "none at this goal: not even the search's lowest rate held within it (a goal below the target's unloaded p99, or a target that fails). Every step's result is kept under capacity/.",
			"steps: every run the search made; \"tried again\" counts the second and third tries of steps in doubt, \"under outside load\" the steps during which other processes took more than their share of the machine (held or not): a search leaning on either is one to repeat on a quieter machine.")
		t.Figures = capacityCurves(b)
	}
	return t
}

// stepsText is how many steps the search took and how many held, then how many were a try
// again of a step in doubt and how many ran under outside load: a search that leaned on them is
// one to measure again on a quieter machine.
func stepsText(c CapacityCell) string {
	held, again, outside := 0, 0, 0
	for _, s := range c.Steps {
		if s.Held {
			held++
		}
		if s.Again {
			again++
		}
		if s.Outside {
			outside++
		}
	}
	v := fmt.Sprintf("%d (%d held", len(c.Steps), held)
	if again > 0 {
		v += fmt.Sprintf("; %d tried again", again)
	}
	if outside > 0 {
		v += fmt.Sprintf("; %d under outside load", outside)
	}
	return v + ")"
}

// capacityCurves: per protocol, every step's p99 against its offered rate, one line per
// target, the goal drawn, each target's capacity ringed: where its line crosses the goal.
func capacityCurves(b *Bench) []curve {
	var out []curve
	for _, p := range capacityProtos(b) {
		c := curve{
			ID: "curve-capacity-" + p, Title: fmt.Sprintf("p99 against offered rate, %s", protoName(p)),
			XLabel: "offered rate, req/s", YLabel: "p99, ms", LogX: true, LogY: true,
		}
		for _, cell := range capacitySorted(b, p) {
			l := curveLine{Series: cell.Target}
			c.Goal, c.GoalLabel = cell.GoalMS, fmt.Sprintf("goal: p99 ≤ %g ms", cell.GoalMS)
			for _, s := range cell.Steps {
				if s.P99 <= 0 {
					continue // a step that measured nothing
				}
				title := fmt.Sprintf("%s at %s req/s: p99 %s ms", cell.Target, fmtInt(float64(s.Rate)), ms(s.P99))
				if !s.Held {
					title += ": " + s.Why
				}
				if s.Outside {
					title += " (under outside load)"
				}
				l.Points = append(l.Points, curvePoint{X: float64(s.Rate), Y: s.P99, Open: !s.Held, Title: title})
			}
			if cell.Rate > 0 {
				l.Mark = &curvePoint{X: float64(cell.Rate), Y: cell.P99}
				l.MarkLabel = cell.CapacityText()
			}
			c.Lines = append(c.Lines, l)
		}
		out = append(out, c)
	}
	return out
}
