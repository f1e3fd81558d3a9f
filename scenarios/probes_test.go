package scenarios

import (
	"encoding/json"
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
		Cases  int      `json:"cases"`
		Failed []string `json:"failed"`
		First  float64  `json:"first"`
		Burst  float64  `json:"burst"`
		Stalls float64  `json:"stalls"`
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
	// the rules the cases of lib/probes_test.js break, summed
	want := map[string][2]float64{"first": {got.First, 5}, "burst": {got.Burst, 4}, "stalls": {got.Stalls, 6}}
	for what, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s counted %v times, want %v", what, v[0], v[1])
		}
	}
}
