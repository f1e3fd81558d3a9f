package engine

import (
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/verdict"
)

// stepResult is a capacity step at 1 000 req/s over h1c as the runner returns it: valid, every
// request answered and checked, behind of them behind schedule, its p99 p99 ms.
func stepResult(p99, behind float64, outside *result.OutsideLoad) *result.Result {
	const n = 10_000
	r := &result.Result{
		Schema: result.Schema, Scenario: "equal-load-h1c", Target: "nginx", Mode: "equal-load", Proto: "h1c",
		ExpectedProto: "HTTP/1.1", DurationS: 10, Requests: n, ProtosSeen: map[string]float64{"HTTP/1.1": n},
		BehindSchedule: &behind, OutsideLoad: outside, Valid: true, Invalid: []string{},
		Counts: &verdict.Counts{Unit: "requests", Answered: n, Iterations: n, SetupOK: true},
		Plan:   &verdict.Plan{Rate: 1000},
	}
	r.Checks.Passes = n
	r.Latency.P99 = p99
	return r
}

// A step not held is in doubt, and tried again, when the machine may be the cause: its p99
// alone just over the goal, or other processes' load over the run; never when it held, or
// failed plainly.
func TestCapacityDoubt(t *testing.T) {
	t.Parallel()
	busy := &result.OutsideLoad{CPUShare: 0.21, Over: true}
	tests := []struct {
		name string
		res  *result.Result
		want string // in the doubt; "" for none
	}{
		{"held", stepResult(4, 0, nil), ""},
		{"p99 just over the goal", stepResult(10.5, 0, nil), "p99 within 1.5 × the goal"},
		{"p99 far over the goal", stepResult(24, 0, nil), ""},
		{"behind schedule", stepResult(12, 500, nil), ""},
		{"p99 far over under outside load", stepResult(24, 0, busy), "other processes took 21% of the machine"},
		{"behind schedule under outside load", stepResult(40, 500, busy), "other processes took 21% of the machine"},
		{"a little outside load, not over its share", stepResult(24, 0, &result.OutsideLoad{CPUShare: 0.05}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			why := tc.res.Held(10)
			if held := why == ""; held != (tc.name == "held") {
				t.Fatalf("the step's verdict: %q: the test's step is not what its name says", why)
			}
			got := ""
			if why != "" {
				got = capacityDoubt(tc.res, 10)
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("capacityDoubt = %q, want %q", got, tc.want)
			}
		})
	}
}
