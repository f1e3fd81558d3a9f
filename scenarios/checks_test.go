package scenarios

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBodyChecks runs lib/checks_test.js, the unit tests of lib/checks.js's byte-for-byte body
// comparison, with the k6 the Makefile builds: a case that fails is named, and what the
// comparison recorded must be one bad_responses sample per reason and one body_differs_at per
// body of the right size that differs, at its first differing byte.
func TestBodyChecks(t *testing.T) {
	t.Parallel()
	out := runK6Test(t, "checks_test.js")
	var got struct {
		Cases         int                `json:"cases"`
		Failed        []string           `json:"failed"`
		Bad           map[string]float64 `json:"bad"`
		BodyDiffersAt map[string]float64 `json:"body_differs_at"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("lib/checks_test.js printed %q: %v", out, err)
	}
	if got.Cases == 0 {
		t.Fatalf("lib/checks_test.js ran no case:\n%s", out)
	}
	for _, f := range got.Failed {
		t.Errorf("lib/checks_test.js: %s", f)
	}
	// the reasons the cases of lib/checks_test.js give, summed
	wantBad := map[string]float64{"status": 2, "size": 3, "body": 3, "proto": 1}
	for why, n := range wantBad {
		if got.Bad[why] != n {
			t.Errorf("bad_responses{why:%s} %v, want %v", why, got.Bad[why], n)
		}
	}
	// bodies differing at bytes 6, 10 and 4095
	wantAt := map[string]float64{"count": 3, "min": 6, "max": 4095, "avg": (6 + 10 + 4095) / 3.0}
	for stat, v := range wantAt {
		if got.BodyDiffersAt[stat] != v {
			t.Errorf("body_differs_at %s %v, want %v", stat, got.BodyDiffersAt[stat], v)
		}
	}
}

// runK6Test runs lib/<script>, a k6 script of unit tests that sends no request, with the k6
// the Makefile builds, and returns what its handleSummary printed.
func runK6Test(t *testing.T, script string) []byte {
	t.Helper()
	k6, err := filepath.Abs(filepath.Join("..", "bin", "k6"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(k6); err != nil {
		t.Skipf("no bin/k6 to run lib/%s with: make k6-build", script)
	}
	cmd := exec.Command(k6, "run", "--quiet", "--no-color", filepath.Join("lib", script))
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("k6 run lib/%s: %v\n%s\n%s", script, err, out, stderr.String())
	}
	return out
}
