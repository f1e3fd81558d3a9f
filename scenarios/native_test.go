package scenarios

import (
	"encoding/json"
	"testing"
)

// TestFreshShares runs lib/native_test.js: a native fresh run's REQUESTS, split over its VUs
// and their iterations (at least FRESH_PARTS each), are each sent once, in parts of at most
// FRESH_CHUNK that differ by at most one.
func TestFreshShares(t *testing.T) {
	t.Parallel()
	out := runK6Test(t, "native_test.js")
	var got struct {
		Cases  int      `json:"cases"`
		Failed []string `json:"failed"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("lib/native_test.js printed %q: %v", out, err)
	}
	if got.Cases != 24 {
		t.Errorf("lib/native_test.js ran %d cases, want 24 (6 plans × 4)", got.Cases)
	}
	for _, f := range got.Failed {
		t.Errorf("lib/native_test.js: %s", f)
	}
}
