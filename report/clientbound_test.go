package report

import (
	"strings"
	"testing"
)

// TestEqualLoadClientBound: where direct could not sustain the rate, the pass ranks no target
// and no target's overload counts against it; where direct could, a target's overload is its own.
func TestEqualLoadClientBound(t *testing.T) {
	cell := func(target, proto string, overload bool) EqualLoadCell {
		e := EqualLoadCell{Target: target, Proto: proto, RateRPS: 5000, Requests: 50000, P50: 1, P99: 3, Valid: true, Run: 1}
		if overload {
			e.Overload = "could not sustain 5000 req/s"
		}
		return e
	}
	tests := []struct {
		name       string
		cells      []EqualLoadCell
		wantBound  map[string]bool // by target
		wantLine   string
		wantInRows string
	}{
		{
			name:       "direct held the rate",
			cells:      []EqualLoadCell{cell("direct", "h1c", false), cell("nginx", "h1c", true)},
			wantBound:  map[string]bool{"direct": false, "nginx": false},
			wantLine:   "nginx could not sustain it",
			wantInRows: "yes: could not sustain 5,000 req/s",
		},
		{
			name:       "direct could not",
			cells:      []EqualLoadCell{cell("direct", "h1c", true), cell("nginx", "h1c", true), cell("caddy", "h1c", false)},
			wantBound:  map[string]bool{"direct": true, "nginx": true, "caddy": true},
			wantLine:   "the client could not hold this rate (direct could not sustain it), so no target is ranked",
			wantInRows: "not judged: the client could not hold this rate",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New("t", "smoke", nil)
			for _, e := range tt.cells {
				b.AddEqualLoad(e)
			}
			b.Finish()
			for _, e := range b.EqualLoad {
				if e.ClientBound != tt.wantBound[e.Target] {
					t.Errorf("%s: ClientBound = %v, want %v", e.Target, e.ClientBound, tt.wantBound[e.Target])
				}
			}
			lines := strings.Join(texts(equalLoadLines(b)), "\n")
			if !strings.Contains(lines, tt.wantLine) {
				t.Errorf("headline %q lacks %q", lines, tt.wantLine)
			}
			var rows []string
			for _, r := range equalLoadTable(b).Rows {
				rows = append(rows, strings.Join(r.Cells, " | "))
			}
			if all := strings.Join(rows, "\n"); !strings.Contains(all, tt.wantInRows) {
				t.Errorf("rows\n%s\nlack %q", all, tt.wantInRows)
			}
		})
	}
}

// TestEqualLoadTies: p99s at equal load are ordered only where the measurement can order them:
// not closer than the client's own lateness (start_lag p99), not overlapping over the runs.
func TestEqualLoadTies(t *testing.T) {
	t.Parallel()
	type runs struct{ p99, lag []float64 } // p99 -1: a run that could not sustain the rate
	tests := []struct {
		name string
		by   map[string]runs
		want string
	}{
		{"within the client's lateness", map[string]runs{
			"nginx": {[]float64{3.2}, []float64{1.2}}, "h2o": {[]float64{3.6}, []float64{1.1}}, "caddy": {[]float64{70}, []float64{1.2}},
		}, "nginx 3.20 ms ≈ h2o 3.60 ms; caddy 70.00 ms (≈: "},
		{"apart by more than the lateness", map[string]runs{
			"nginx": {[]float64{3.2}, []float64{0.3}}, "h2o": {[]float64{3.6}, []float64{0.3}},
		}, "nginx 3.20 ms; h2o 3.60 ms"},
		{"overlapping over the runs", map[string]runs{
			"nginx": {[]float64{2, 5, 3}, nil}, "haproxy": {[]float64{4, 6, 6.5}, nil},
		}, "nginx 3.00 ms ≈ haproxy 6.00 ms (≈: "},
		{"sustained in some runs only", map[string]runs{
			"nginx": {[]float64{3.2}, []float64{0.3}}, "caddy": {[]float64{9.6, 10.5, -1}, []float64{1.3, 2.1, 4}},
		}, "nginx 3.20 ms; caddy 10.05 ms (could not sustain it in 1 of 3 runs)"},
		{"apart in every run", map[string]runs{
			"nginx": {[]float64{2, 2.5, 3}, nil}, "haproxy": {[]float64{4, 4.5, 5}, nil},
		}, "nginx 2.50 ms; haproxy 4.50 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := New("t", "smoke", nil)
			for target, r := range tt.by {
				for i, p := range r.p99 {
					e := EqualLoadCell{Target: target, Proto: "h2", RateRPS: 2000, Requests: 20000, P50: 1, P99: p, Valid: true, Run: i + 1}
					if r.lag != nil {
						e.StartLagP99 = r.lag[i]
					}
					if p < 0 { // a run that could not sustain the rate
						e.P99, e.Overload = 40, "could not sustain 2000 req/s"
					}
					b.AddEqualLoad(e)
				}
			}
			b.Finish()
			lines := strings.Join(texts(equalLoadLines(b)), "\n")
			if !strings.Contains(lines, "2,000 req/s: "+tt.want) {
				t.Errorf("headline %q lacks %q", lines, tt.want)
			}
		})
	}
}
