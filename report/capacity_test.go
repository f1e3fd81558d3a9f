package report

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/calibrate"
)

// capacityCell is a search's answer with the steps that led to it.
func capacityCell(target string, rate int, atCeiling bool, steps ...calibrate.SearchStep) CapacityCell {
	c := CapacityCell{Target: target, Proto: "h1c", GoalMS: 10, Rate: rate, AtCeiling: atCeiling}
	if atCeiling {
		c.Ceiling, c.CeilingFrom = rate, CeilingDirect
	}
	for _, s := range steps {
		c.Steps = append(c.Steps, CapacityStep{SearchStep: s, File: "capacity/x.json"})
		if s.Held && s.Rate == rate {
			c.P99 = s.P99
		}
	}
	return c
}

func held(rate int, p99 float64) calibrate.SearchStep {
	return calibrate.SearchStep{Rate: rate, P99: p99, Held: true}
}

func over(rate int, p99 float64) calibrate.SearchStep {
	return calibrate.SearchStep{Rate: rate, P99: p99, Why: "p99 over the goal"}
}

// The capacity's table, headline and curve say each target's capacity alike: the highest
// first after direct, "≥" at the client's ceiling, "none at this goal" without a figure.
func TestCapacityReport(t *testing.T) {
	t.Parallel()
	b := New("cap", "smoke", nil)
	b.AddCapacity(capacityCell("nginx", 6000, false, held(4000, 2), over(8000, 40), held(6000, 5), over(7000, 14)))
	b.AddCapacity(capacityCell("direct", 8000, false, held(4000, 1), held(8000, 3), over(16000, 30)))
	b.AddCapacity(capacityCell("haproxy", 8000, true, held(4000, 1), held(8000, 2)))
	b.AddCapacity(capacityCell("caddy", 0, false, over(4000, 20), over(2000, 12), over(1000, 11)))
	again := held(5000, 9)
	again.Again = true
	noisy := over(5000, 12)
	noisy.Doubt, noisy.Outside = "outside load: other processes took 20% of the machine", true
	b.AddCapacity(capacityCell("envoy", 5000, false, held(4000, 3), noisy, again, again, over(6000, 30)))
	b.Finish()

	lines := capacityLines(b)
	if len(lines) != 1 || lines[0].Text != "Capacity at p99 ≤ goal, HTTP/1.1 cleartext (10 ms): direct 8,000; haproxy ≥ 8,000; nginx 6,000; envoy 5,000; caddy none at this goal req/s "+
		"(≥: held at 8,000 req/s, direct's capacity (the client and the upstream alone))" {
		t.Errorf("headline %q", texts(lines))
	}
	tb := capacityTable(b)
	checkRows(t, tb, func(r row) string { return strings.Join(r.Cells, " | ") },
		"HTTP/1.1 cleartext | direct | 8,000 | 3.00 | baseline | 3 (2 held) | —",
		"HTTP/1.1 cleartext | haproxy | ≥ 8,000 | 2.00 | 100% | 2 (2 held) | direct's capacity (the client and the upstream alone) at 8,000 req/s",
		"HTTP/1.1 cleartext | nginx | 6,000 | 5.00 | 75% | 4 (2 held) | —",
		"HTTP/1.1 cleartext | envoy | 5,000 | 9.00 | 62% | 5 (3 held; 2 tried again; 1 under outside load) | —",
		"HTTP/1.1 cleartext | caddy | none at this goal | — | — | 3 (0 held) | —",
	)
	if len(tb.Figures) != 1 {
		t.Fatalf("%d curves, want one for h1c", len(tb.Figures))
	}
	c := tb.Figures[0]
	svg := c.svg(colors(b.Targets()), true)
	for _, want := range []string{`class="goal"`, `goal: p99 ≤ 10 ms`, `data-target="nginx"`, `class="mark"`, `fill="#ffffff"`, `envoy at 5,000 req/s: p99 12.00 ms: p99 over the goal (under outside load)`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the curve lacks %q", want)
		}
	}
	// a mark for every target with a capacity, none for the one without
	if n := strings.Count(svg, `class="mark"`); n != 4 {
		t.Errorf("%d capacities marked, want 4", n)
	}
	if err := xmlWellFormed(svg); err != nil {
		t.Errorf("the curve is no well-formed SVG: %v", err)
	}
}

// checkRows holds a table's rows, each as text says it, to want, in order.
func checkRows(t *testing.T, tb table, text func(row) string, want ...string) {
	t.Helper()
	var got []string
	for _, r := range tb.Rows {
		got = append(got, text(r))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s rows:\n%s\nwant:\n%s", tb.ID, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// xmlWellFormed reads the whole document as XML.
func xmlWellFormed(doc string) error {
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		if _, err := d.Token(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// compare sets each target's capacity in A beside B's: a change with one search each, a bound
// at the client's ceiling said as such, a target in one bench only said too.
func TestCompareCapacity(t *testing.T) {
	t.Parallel()
	a, b := New("a", "smoke", nil), New("b", "smoke", nil)
	a.AddCapacity(capacityCell("nginx", 6000, false, held(6000, 5)))
	b.AddCapacity(capacityCell("nginx", 7500, false, held(7500, 6)))
	a.AddCapacity(capacityCell("haproxy", 8000, true, held(8000, 2)))
	b.AddCapacity(capacityCell("haproxy", 8000, true, held(8000, 2)))
	b.AddCapacity(capacityCell("caddy", 5000, false, held(5000, 7)))
	got := map[string]Change{}
	for _, ch := range compareCapacity(a, b) {
		got[ch.Target] = ch
	}
	if n := got["nginx"]; n.ChangePct == nil || *n.ChangePct != 25 || n.Verdict() != "n=1: no spread" {
		t.Errorf("nginx 6000 → 7500: %+v (%s)", n, n.Verdict())
	}
	if h := got["haproxy"]; h.Note != "at the client's ceiling: a bound, not a capacity" {
		t.Errorf("haproxy at the ceiling in both: %+v", h)
	}
	if c := got["caddy"]; c.Note != "only in B" {
		t.Errorf("caddy in B only: %+v", c)
	}
}
