package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	s := func(median, stdev float64, n int) result.Summary {
		return result.Summary{N: n, Median: median, Stdev: stdev}
	}
	tests := []struct {
		name    string
		a, b    result.Summary
		pct     float64 // NaN: nil
		exceeds bool
		note    string
	}{
		// +600 against 2 × max(100, 110) = 220: beyond.
		{"beyond", s(6000, 100, 3), s(6600, 110, 3), 10, true, ""},
		// +100 against 2 × 1000: within.
		{"within", s(10000, 1000, 3), s(10100, 1000, 3), 1, false, ""},
		// exactly 2 × stdev is not beyond (strictly greater).
		{"edge", s(1000, 50, 5), s(1100, 40, 5), 10, false, ""},
		// −30% with a tiny spread: beyond, worse.
		{"drop", s(1000, 5, 3), s(700, 5, 3), -30, true, ""},
		// one run on either side: a change, but no spread to judge it by.
		{"n=1", s(1000, 0, 1), s(1200, 0, 3), 20, false, "n=1: no spread"},
		{"no valid A", s(0, 0, 0), s(1200, 0, 3), math.NaN(), false, "no valid run in A"},
		{"no valid B", s(1000, 0, 3), s(0, 0, 0), math.NaN(), false, "no valid run in B"},
		// identical runs (stdev 0): any change is beyond.
		{"zero spread", s(100, 0, 3), s(101, 0, 3), 1, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ch := Change{A: tc.a, B: tc.b}
			decide(&ch)
			switch {
			case math.IsNaN(tc.pct) && ch.ChangePct != nil:
				t.Errorf("change = %v, want none", *ch.ChangePct)
			case !math.IsNaN(tc.pct) && (ch.ChangePct == nil || math.Abs(*ch.ChangePct-tc.pct) > 1e-9):
				t.Errorf("change = %v, want %v", ch.ChangePct, tc.pct)
			}
			if ch.Exceeds != tc.exceeds || ch.Note != tc.note {
				t.Errorf("exceeds %v note %q, want %v %q", ch.Exceeds, ch.Note, tc.exceeds, tc.note)
			}
		})
	}
}

func cloneBench(t *testing.T, b *Bench) *Bench {
	t.Helper()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var c Bench
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestCompareBenches(t *testing.T) {
	t.Parallel()
	a := synthBench()
	b := cloneBench(t, a)
	b.TestID = "synth-2"
	// nginx reused-h2: 6000, 6100, 5900 → 6600, 6710, 6490 (+10%, spread 100/110): beyond.
	// direct reused-h1: +100 on each run (spread 1000): within.
	for i := range b.Cells {
		c := &b.Cells[i]
		for j := range c.Runs {
			if c.Runs[j].RPS == nil {
				continue
			}
			v := *c.Runs[j].RPS
			switch {
			case c.Scenario == "reused-h2" && c.Target == "nginx":
				v *= 1.1
			case c.Scenario == "reused-h1" && c.Target == "direct":
				v += 100
			case c.Scenario == "fresh-h1" && c.Target == "nginx":
				v = 2000
			}
			c.Runs[j].RPS = &v
		}
	}
	// caddy reused-h3 only in A.
	for i := range b.Cells {
		if b.Cells[i].Scenario == "reused-h3" && b.Cells[i].Target == "caddy" {
			b.Cells = append(b.Cells[:i], b.Cells[i+1:]...)
			break
		}
	}
	b.Finish()
	changes := Compare(a, b)
	get := func(sc, tg, p string) Change {
		for _, c := range changes {
			if c.Scenario == sc && c.Target == tg && c.Proto == p {
				return c
			}
		}
		t.Fatalf("no change for %s %s %s", sc, tg, p)
		return Change{}
	}
	if c := get("reused-h2", "nginx", "h2"); !c.Exceeds || c.ChangePct == nil || math.Abs(*c.ChangePct-10) > 1e-9 || c.Verdict() != "better, beyond spread" {
		t.Errorf("nginx reused-h2: %+v %s", c, c.Verdict())
	}
	if c := get("reused-h1", "direct", "h1"); c.Exceeds || c.Verdict() != "within spread" || math.Abs(*c.ChangePct-1) > 1e-9 {
		t.Errorf("direct reused-h1: %+v", c)
	}
	if c := get("fresh-h1", "nginx", "h1"); c.Note != "n=1: no spread" || math.Abs(*c.ChangePct+20) > 1e-9 {
		t.Errorf("fresh-h1 nginx: %+v", c)
	}
	if c := get("reused-h3", "caddy", "h3"); c.Note != "only in A" {
		t.Errorf("caddy reused-h3: %+v", c)
	}
	if c := get("reused-h3", "nginx", "h3"); c.Note != "no h3" {
		t.Errorf("nginx reused-h3: %+v", c)
	}
	if c := get("fresh-h2", "envoy", "h2"); c.Note != "no valid run in A nor B" {
		t.Errorf("envoy fresh-h2: %+v", c)
	}
	if c := get("sse", "nginx", "h1"); c.Metric != "p50 ms" || c.HigherIsBetter || c.A.Median != 0.5 {
		t.Errorf("sse probe compared on %+v", c)
	}
	if c := get("equal-load", "caddy", "h1"); c.Note != "no valid run in A nor B" {
		t.Errorf("equal-load caddy: %+v", c)
	}

	var buf bytes.Buffer
	if err := PrintCompare(&buf, a, b, changes); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{"A: synth-1 (profile smoke), 57 of 59 cells valid", "B: synth-2", "Headline, A then B:", "better, beyond spread", "+10.0%", "within spread", "n=1: no spread", "-20.0%", "only in A"} {
		if !strings.Contains(out, w) {
			t.Errorf("compare output lacks %q:\n%s", w, out)
		}
	}
}

// TestWriteHeadlines sets each headline line of A beside B's line on the same topic, whatever
// the figures in it (an equal-load rate), and says when one side has none.
func TestWriteHeadlines(t *testing.T) {
	t.Parallel()
	a := []headLine{
		{Topic: "Target CPU per request, reused HTTP/2 TLS", Text: "Target CPU per request, reused HTTP/2 TLS: nginx 40 µs; direct 50 µs"},
		{Topic: "p99 at equal load, HTTP/2 TLS", Text: "p99 at equal load, HTTP/2 TLS at 2,000 req/s: nginx 2.00 ms"},
	}
	b := []headLine{
		{Topic: "p99 at equal load, HTTP/2 TLS", Text: "p99 at equal load, HTTP/2 TLS at 2,400 req/s: nginx 2.50 ms"},
		{Topic: "Client", Text: "Client: reused cells ran on k6"},
	}
	var buf bytes.Buffer
	writeHeadlines(&buf, a, b)
	want := `
Headline, A then B:
  Target CPU per request, reused HTTP/2 TLS
    A  nginx 40 µs; direct 50 µs
    B  —
  p99 at equal load, HTTP/2 TLS
    A  at 2,000 req/s: nginx 2.00 ms
    B  at 2,400 req/s: nginx 2.50 ms
  Client
    A  —
    B  reused cells ran on k6

`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
