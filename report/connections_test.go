package report

import (
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
)

// sweepRun is a reused run of the sweep and what the runner sampled of its target.
func sweepRun(target string, connections int, rps, p99, rssMB float64, invalid ...string) ConnectionsPoint {
	r := &result.Result{Scenario: "reused-h1c", Mode: "reused", Target: target, Proto: "h1c", RPS: &rps, Latency: result.Stats{P99: p99}, Valid: len(invalid) == 0, Invalid: invalid}
	return NewConnectionsPoint(connections, "connections/x.json", r, &sample.Resources{RSSPeakMB: rssMB})
}

// The sweep's table lists every point, per target in rising connections (direct first), an
// invalid one with its reason and no figures; its curves draw req/s, p99 and RSS against
// connections, one line per target, the invalid point hollow.
func TestConnectionsReport(t *testing.T) {
	t.Parallel()
	b := New("sweep", "smoke", nil)
	b.AddConnections(sweepRun("nginx", 64, 30000, 4, 20))
	b.AddConnections(sweepRun("direct", 64, 40000, 3, 8))
	b.AddConnections(sweepRun("nginx", 16, 25000, 1, 12))
	b.AddConnections(sweepRun("direct", 16, 35000, 0.8, 7))
	b.AddConnections(sweepRun("nginx", 256, 20000, 30, 60, "the target held 200 of the 256 connections planned at the end: it caps connections below the plan"))
	tb := connectionsTable(b)
	checkRows(t, tb, func(r row) string { return strings.Join(r.Cells[:7], " | ") },
		"HTTP/1.1 cleartext | direct | 16 | 35,000 | 0.80 | 7.0 | valid",
		"HTTP/1.1 cleartext | direct | 64 | 40,000 | 3.00 | 8.0 | valid",
		"HTTP/1.1 cleartext | nginx | 16 | 25,000 | 1.00 | 12.0 | valid",
		"HTTP/1.1 cleartext | nginx | 64 | 30,000 | 4.00 | 20.0 | valid",
		"HTTP/1.1 cleartext | nginx | 256 | — | — | 60.0 | invalid: the target held 200 of the 256 connections planned at the end: it caps connections below the plan",
	)
	if len(tb.Figures) != 3 {
		t.Fatalf("%d curves, want req/s, p99 and RSS for h1c", len(tb.Figures))
	}
	for _, c := range tb.Figures {
		svg := c.svg(colors(b.Targets()), true)
		if n := strings.Count(svg, `class="series"`); n != 2 {
			t.Errorf("%s: %d lines, want one per target", c.ID, n)
		}
		if n := strings.Count(svg, `fill="#ffffff"`); n != 1 {
			t.Errorf("%s: %d hollow points, want the invalid one", c.ID, n)
		}
		if strings.Contains(svg, `stroke=""`) {
			t.Errorf("%s: a line without its target's colour (a bench of the sweep alone has no cells to take its targets from)", c.ID)
		}
		if err := xmlWellFormed(svg); err != nil {
			t.Errorf("%s is no well-formed SVG: %v", c.ID, err)
		}
	}
	if e := connectionsTable(New("none", "smoke", nil)); len(e.Rows) != 0 || e.Empty == "" || len(e.Links) != 0 {
		t.Errorf("a bench without a sweep: %+v", e)
	}
}
