package scenarios

import (
	"encoding/json"
	"testing"
)

// TestBodySizeChecks runs lib/bodysizes_test.js, the unit tests of the body-size sweep's checks
// on k6/http's path (h3, CLIENT=k6): BODY_BYTES' bounds, a body of any size compared a slice at
// a time with the pattern, a download cut short counted in body_cut, an upload's answer.
func TestBodySizeChecks(t *testing.T) {
	t.Parallel()
	out := runK6Test(t, "bodysizes_test.js")
	var got struct {
		Cases         int                `json:"cases"`
		Failed        []string           `json:"failed"`
		Bad           map[string]float64 `json:"bad"`
		BodyDiffersAt map[string]float64 `json:"body_differs_at"`
		BodyCut       float64            `json:"body_cut"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("lib/bodysizes_test.js printed %q: %v", out, err)
	}
	if got.Cases == 0 {
		t.Fatalf("lib/bodysizes_test.js ran no case:\n%s", out)
	}
	for _, f := range got.Failed {
		t.Errorf("lib/bodysizes_test.js: %s", f)
	}
	// the reasons its cases give, summed: samePattern's 3 bodies and 1 size, checkAnswer's cut
	// download (size), broken download (status, size) and short upload answer (body)
	for why, n := range map[string]float64{"status": 1, "size": 3, "body": 4} {
		if got.Bad[why] != n {
			t.Errorf("bad_responses{why:%s} %v, want %v", why, got.Bad[why], n)
		}
	}
	const mib = 1 << 20
	// bodies differing at bytes 6, 63489, 8 MiB - 1 and the upload answer's 9
	wantAt := map[string]float64{"count": 4, "min": 6, "max": 8*mib - 1}
	for stat, v := range wantAt {
		if got.BodyDiffersAt[stat] != v {
			t.Errorf("body_differs_at %s %v, want %v", stat, got.BodyDiffersAt[stat], v)
		}
	}
	if got.BodyCut != 2 {
		t.Errorf("body_cut %v, want 2 (the download cut short and the one broken mid-body)", got.BodyCut)
	}
}
