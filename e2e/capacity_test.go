package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/stack"
)

// TestCapacity: the capacity search finds what a target holds, on the real CLI against real
// targets. direct and an nginx copy have one at h1c, every step judged and kept; an nginx copy
// that rejects what exceeds a known rate (limit_req) is found within 10% of that rate; and a
// goal below every target's unloaded p99 gives "none at this goal", not a number.
func TestCapacity(t *testing.T) {
	const plain, limited, limit = "nginx-copy", "nginx-limited", 2000
	h := variantHarness(t, 2750,
		nginxVariant{name: plain},
		nginxVariant{limited, [][2]string{
			// one bucket for every request from loopback, at the http level; a burst of 25 ms
			// of requests absorbs the open model's timer slack (a step's pool holds rate × goal
			// connections, and a late timer sends their requests at once), not a rate above the
			// limit: a second above it overflows the bucket
			{"    upstream upstream_h1c {", "    limit_req_zone $binary_remote_addr zone=capacity:1m rate=" + strconv.Itoa(limit) + "r/s;\n    limit_req_status 503;\n\n    upstream upstream_h1c {"},
			inLocation("limit_req zone=capacity burst=50 nodelay;"),
		}},
	)
	bench := func(t *testing.T, testid, goal string, targets ...string) *report.Bench {
		t.Helper()
		// the smoke profile's connections: the tiny runs' 4 would hold no more than ~1000 req/s
		// of the open model at these latencies, less than the limited copy's limit
		out, err := h.proxybenchEnv(t, []string{"CONNECTIONS=32"}, "bench", "-targets", strings.Join(targets, ","), "-modes", "capacity", "-protos", "h1c",
			"-capacity-p99", goal, "-calibrate-seconds", "0", "-testid", testid)
		if err != nil {
			t.Fatalf("proxybench bench -modes capacity: %v\n%s", err, out)
		}
		b, err := report.Load(filepath.Join(h.results, testid))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return b
	}
	find := func(t *testing.T, b *report.Bench, target string) report.CapacityCell {
		t.Helper()
		for _, c := range b.Capacity {
			if c.Target == target && c.Proto == "h1c" {
				return c
			}
		}
		t.Fatalf("no capacity of %s over h1c in %+v", target, b.Capacity)
		return report.CapacityCell{}
	}

	b := bench(t, "e2e-capacity", "50", plain, limited)
	for _, target := range []string{stack.Direct, plain, limited} {
		c := find(t, b, target)
		t.Logf("%s: %s req/s at p99 %.2f ms, %d steps: %+v", target, c.CapacityText(), c.P99, len(c.Steps), c.Steps)
		if c.Rate <= 0 || c.Err != "" || c.P99 <= 0 || c.P99 > 50 {
			t.Errorf("%s: capacity %d req/s at p99 %v ms (%s), want a rate held within the goal", target, c.Rate, c.P99, c.Err)
		}
		for _, s := range c.Steps {
			if s.Held != (s.Why == "") || (s.Rate > c.Rate && heldByMajority(c, s.Rate)) || s.File == "" {
				t.Errorf("%s: step %+v does not agree with the capacity %d, or has no result file", target, s, c.Rate)
			}
		}
		// the search bisects to within 5% between the last rate held and the first not
		if above := lowestNotHeld(c); !c.AtCeiling && (above == 0 || float64(above-c.Rate) > 0.05*float64(c.Rate)) {
			t.Errorf("%s: capacity %d, the lowest rate not held %d: not within 5%%", target, c.Rate, above)
		}
	}
	if c := find(t, b, limited); c.Rate < limit*9/10 || c.Rate > limit*11/10 {
		t.Errorf("%s rejects above %d req/s: capacity %d, want within 10%% of it", limited, limit, c.Rate)
	}
	// direct bounds the others when the client's ceiling was not measured
	direct := find(t, b, stack.Direct)
	for _, target := range []string{plain, limited} {
		if c := find(t, b, target); c.Ceiling != direct.Rate || c.Rate > direct.Rate {
			t.Errorf("%s: bounded by %d (%s), capacity %d; want direct's capacity %d as the bound", target, c.Ceiling, c.CeilingFrom, c.Rate, direct.Rate)
		}
	}

	none := find(t, bench(t, "e2e-capacity-none", "0.001", plain), stack.Direct)
	if none.Rate != 0 || none.CapacityText() != "none at this goal" || len(none.Steps) == 0 {
		t.Errorf("a goal of 1 µs: %+v, want none at this goal", none)
	}
	for _, s := range none.Steps {
		if s.Held || !strings.Contains(s.Why, "over the goal of 0.001 ms") {
			t.Errorf("a goal of 1 µs: step %+v, want not held for its p99", s)
		}
	}
}

// heldByMajority: most tries of rate held (a step in doubt is tried three times, and a rate
// held once of three is not held).
func heldByMajority(c report.CapacityCell, rate int) bool {
	held, tries := 0, 0
	for _, s := range c.Steps {
		if s.Rate == rate {
			tries++
			if s.Held {
				held++
			}
		}
	}
	return 2*held > tries
}

// lowestNotHeld is the lowest rate above the capacity that did not hold, 0 when none.
func lowestNotHeld(c report.CapacityCell) int {
	low := 0
	for _, s := range c.Steps {
		if !s.Held && s.Rate > c.Rate && (low == 0 || s.Rate < low) {
			low = s.Rate
		}
	}
	return low
}
