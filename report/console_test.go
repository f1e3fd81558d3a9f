package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/verdict"
)

func TestPrintRuns(t *testing.T) {
	t.Parallel()
	n, rps := 2000.0, 4000.0
	results := []*result.Result{
		{
			Target: "direct", Mode: "fresh", Requests: 2000, RPS: &rps, NewConnections: &n, Latency: result.Stats{P50: 1.5, P95: 3, P99: 150},
			ProtosSeen: map[string]float64{"HTTP/2.0": 2000}, Valid: true,
			UpstreamConns: &result.UpstreamConns{Opened: 2001, Requests: 2001, Per1k: 1000},
			Cost:          &result.Cost{TargetCPUMicros: 412.4, ClientCPUMicros: 180},
		},
		{
			Target: "nginx", Mode: "fresh", Requests: 1990, ProtosSeen: map[string]float64{"HTTP/2.0": 1980, "HTTP/1.1": 10},
			Valid: false, Invalid: []string{"10 responses over HTTP/1.1"},
		},
		{Target: "caddy", Mode: "fresh", Err: "k6 run fresh-h2 (target caddy): exit status 107"},
	}
	var buf bytes.Buffer
	PrintRuns(&buf, "fresh-h2", results)
	out := buf.String()
	for _, want := range []string{
		"== fresh-h2", "new conns", "upstream conns /1k req", "1000.0", "4,000", "1.50", "150", "HTTP/2.0",
		// what the target's new connections cost it leads, after the target and protocol
		"target  proto  target CPU µs/conn  reqs",
		"HTTP/1.1×10 HTTP/2.0×1980", "invalid: nginx : 10 responses over HTTP/1.1",
		"invalid: caddy : k6 run fresh-h2 (target caddy): exit status 107",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, " yes") != 1 || strings.Count(out, " NO") != 2 {
		t.Errorf("want one valid row and two invalid:\n%s", out)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "direct 412 2000 4,000") {
		t.Errorf("direct's row does not lead with its 412 µs per new connection:\n%s", out)
	}
}

// TestPrintRunsTimings: a paced probe's longest gap is a column of its own, marked * when the
// run saw outside load; stalls and outside load are notes, never a reason the row is invalid.
func TestPrintRunsTimings(t *testing.T) {
	t.Parallel()
	gaps := func(p50, maxGap float64) map[string]result.Stats {
		return map[string]result.Stats{"sse_first_event": {P50: 0.4}, "sse_event_gap": {P50: p50, Max: maxGap}}
	}
	results := []*result.Result{
		{
			Target: "direct", Proto: "h1c", Requests: 12, Extra: gaps(150.5, 236.4), Valid: true,
			Pacing:      &verdict.Pacing{Part: "event", Parts: "events", IntervalMS: 150, TogetherMS: 15, StallOverMS: 187.5, Responses: 12, Stalls: 1, TogetherHeld: 1},
			OutsideLoad: &result.OutsideLoad{CPUShare: 0.51, Over: true},
		},
		{
			Target: "nginx", Proto: "h1c", Requests: 12, Extra: gaps(150.4, 151.2), Valid: true,
			Pacing:      &verdict.Pacing{Part: "event", Parts: "events", IntervalMS: 150, TogetherMS: 15, StallOverMS: 187.5, Responses: 12},
			OutsideLoad: &result.OutsideLoad{CPUShare: 0.04},
		},
	}
	var buf bytes.Buffer
	PrintRuns(&buf, "sse", results)
	out := buf.String()
	for _, want := range []string{
		"sse_event_gap p50", "sse_event_gap max", "236*", " 151 ",
		"direct h1c: * outside load: other processes used 51% of the CPU",
		"stalled: 1 of 12 responses had a gap over 187.5 ms (a figure, not a verdict",
		"events released together in 1 of 12 responses: not more than half, so not judged",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, " yes") != 2 || strings.Contains(out, "invalid") || strings.Contains(out, "nginx h1c:") {
		t.Errorf("want two valid rows and no note for nginx:\n%s", out)
	}
}

// A cell not run because its target lacks the protocol is a row that says so, and a note why;
// never an invalid row.
func TestPrintRunsSkipped(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	PrintRuns(&buf, "fresh-h3", []*result.Result{{
		Scenario: "fresh-h3", Target: "nginx", Proto: "h3", Mode: "fresh", Invalid: []string{},
		Skipped: "no h3", SkipReason: "nginx does not serve h3 (it serves h1, h1c, h2)",
	}})
	out := buf.String()
	for _, want := range []string{"no h3", "not run: nginx h3: nginx does not serve h3"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "invalid") || strings.Contains(out, " NO") {
		t.Errorf("a skipped cell reads as invalid:\n%s", out)
	}
}
