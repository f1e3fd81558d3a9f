package scenarios

import (
	"encoding/json"
	"maps"
	"testing"
)

// TestPacingRules runs lib/probes_test.js, the unit tests of lib/probes.js's pacing rules on
// recorded arrival times: parts released together (a burst, a first part that came with the
// last) break a rule; a stall, a late first read and ±40 ms of jitter break none and are
// counted as stalls where a gap was long. What the rules recorded must add up to the cases'.
func TestPacingRules(t *testing.T) {
	t.Parallel()
	out := runK6Test(t, "probes_test.js")
	var got struct {
		Cases  int        `json:"cases"`
		Failed []string   `json:"failed"`
		First  [2]float64 `json:"first"` // held back, of judged
		Burst  [2]float64 `json:"burst"`
		Stalls float64    `json:"stalls"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("lib/probes_test.js printed %q: %v", out, err)
	}
	if got.Cases == 0 {
		t.Fatalf("lib/probes_test.js ran no case:\n%s", out)
	}
	for _, f := range got.Failed {
		t.Errorf("lib/probes_test.js: %s", f)
	}
	// the rules the cases of lib/probes_test.js break, summed: each of its 13 cases is judged
	// by both rules
	want := map[string][2]float64{"first": {5, 13}, "burst": {4, 13}}
	for what, v := range map[string][2]float64{"first": got.First, "burst": got.Burst} {
		if v != want[what] {
			t.Errorf("%s held back %v of %v responses, want %v of %v", what, v[0], v[1], want[what][0], want[what][1])
		}
	}
	if got.Stalls != 6 {
		t.Errorf("%v stalls counted, want 6", got.Stalls)
	}
}

// TestProbeFailures runs lib/failures_test.js, the unit tests of lib/probes.js's failureOf on
// responses as k6's clients and ours return them: a timeout before the head, a stall after it,
// a refused, reset or TLS connection, anything else; and countFailure counts each by its why.
func TestProbeFailures(t *testing.T) {
	t.Parallel()
	out := runK6Test(t, "failures_test.js")
	var got struct {
		Cases   int                `json:"cases"`
		Failed  []string           `json:"failed"`
		Counted map[string]float64 `json:"counted"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("lib/failures_test.js printed %q: %v", out, err)
	}
	if got.Cases == 0 {
		t.Fatalf("lib/failures_test.js ran no case:\n%s", out)
	}
	for _, f := range got.Failed {
		t.Errorf("lib/failures_test.js: %s", f)
	}
	// the whys of its 14 cases, and the one ws.echo() why it counts as given
	want := map[string]float64{"timeout": 3, "stalled": 2, "refused": 1, "reset": 2, "tls": 2, "other": 2, "no_welcome": 1}
	if !maps.Equal(got.Counted, want) {
		t.Errorf("probe_failures counted %v, want %v", got.Counted, want)
	}
}
