package report

import (
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/verdict"
)

// TestPacingTable: the streamed probes' longest gap per target and protocol, with its stalls
// and a * where a run saw outside load; a stall never makes a cell invalid, a cell invalid for
// another reason is still marked so.
func TestPacingTable(t *testing.T) {
	t.Parallel()
	gap := func(key string, maxGap float64) map[string]result.Stats {
		return map[string]result.Stats{key: {P50: 50, Max: maxGap}}
	}
	b := &Bench{Cells: []Cell{
		{Scenario: "stream", Target: "direct", Proto: "h1c", Valid: true, Runs: []Run{
			{Valid: true, Extra: gap("stream_chunk_gap", 51.2), Pacing: &verdict.Pacing{StallOverMS: 75}},
			{
				Valid: true, Extra: gap("stream_chunk_gap", 86.1), Pacing: &verdict.Pacing{Parts: "chunks", StallOverMS: 75, Responses: 12, Stalls: 1, TogetherHeld: 1},
				OutsideLoad: &result.OutsideLoad{CPUShare: 0.5, Over: true},
			},
		}},
		{Scenario: "stream", Target: "nginx", Proto: "h1c", Valid: false, Runs: []Run{
			{Valid: false, Extra: gap("stream_chunk_gap", 0.3), Pacing: &verdict.Pacing{StallOverMS: 75}},
		}},
		{Scenario: "sse", Target: "direct", Proto: "h1c", Valid: true, Runs: []Run{
			{Valid: true, Extra: gap("sse_event_gap", 150.9), Pacing: &verdict.Pacing{StallOverMS: 187.5}},
		}},
		{Scenario: "sse", Target: "nginx", Proto: "h1c", NoProto: "no h3"},
	}}
	tb := pacingTable(b)
	if want := []string{"target", "/stream h1c", "/sse h1c"}; strings.Join(tb.Head, "|") != strings.Join(want, "|") {
		t.Fatalf("head %q, want %q", tb.Head, want)
	}
	want := map[string]struct {
		cells []string
		class string
	}{
		"direct": {[]string{"direct", "86.10 (1 stalled)*", "151"}, ""},
		"nginx":  {[]string{"nginx", "0.30", "no h3"}, classInvalid},
	}
	if len(tb.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(tb.Rows), len(want), tb.Rows)
	}
	for _, r := range tb.Rows {
		w := want[r.Cells[0]]
		if strings.Join(r.Cells, "|") != strings.Join(w.cells, "|") || r.Class != w.class {
			t.Errorf("row %q (class %q), want %q (class %q)", r.Cells, r.Class, w.cells, w.class)
		}
	}
	notes := strings.Join(tb.Notes, "\n")
	for _, n := range []string{
		"stalls: responses with a gap longer", "* measured while processes other than",
		"/stream h1c direct: chunks released together in 1 of 12 responses: not more than half, so not judged",
	} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}
}
