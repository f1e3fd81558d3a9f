package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/stack"
)

// `proxybench soak` (make soak) brings direct and one target up, runs the stress profile's
// reused scenario against it for MINUTES, reads the RSS and open files of k6, the target and
// the upstream every interval, judges their growth against its bounds, saves soak.json, and
// leaves nothing up.
func TestSoak(t *testing.T) {
	h := harnessAt(t, 1450, "nginx")
	const testid = "e2e-soak"
	t.Cleanup(func() { h.down(t) })
	// tinyEnv's CONNECTIONS and STREAMS keep the stress profile's load small; its DURATION is
	// the soak's own (MINUTES)
	out, err := h.proxybench(t, "soak", "-target", "nginx", "-minutes", "0.5", "-interval", "2s", "-testid", testid)
	t.Log(stack.LastLines(out, 40))
	if err != nil {
		t.Fatalf("soak: %v", err)
	}
	for _, want := range []string{"nginx RSS MiB", "bounds:", "soak passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q", want)
		}
	}

	data, err := os.ReadFile(filepath.Join(h.results, testid, "soak.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Profile   string `json:"profile"`
		Processes []struct {
			Role string `json:"role"`
			PID  int    `json:"pid"`
		} `json:"processes"`
		Samples []struct {
			T     float64 `json:"t_s"`
			Procs map[string]struct {
				RSS uint64 `json:"rss_bytes"`
				FDs int    `json:"fds"`
			} `json:"procs"`
		} `json:"samples"`
		Verdict []struct {
			Role string `json:"role"`
			OK   bool   `json:"ok"`
		} `json:"verdict"`
		Pass   bool   `json:"pass"`
		Valid  bool   `json:"k6_valid"`
		Result string `json:"result"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Profile != "stress" || !doc.Pass || !doc.Valid || len(doc.Verdict) != 6 {
		t.Errorf("soak.json: profile %s, pass %v, k6 valid %v, %d verdicts; want stress, a pass, a valid run and 6 verdicts (RSS and fds of 3 processes)",
			doc.Profile, doc.Pass, doc.Valid, len(doc.Verdict))
	}
	if _, err := os.Stat(doc.Result); err != nil {
		t.Errorf("the k6 result soak.json names: %v", err)
	}
	// 30 s measured, a sample every 2 s, and k6's start and warm-up before
	if len(doc.Samples) < 15 {
		t.Errorf("%d samples, want at least 15", len(doc.Samples))
	}
	for _, role := range []string{"k6", "target", "upstream"} {
		n := 0
		for _, s := range doc.Samples {
			if u, ok := s.Procs[role]; ok {
				if u.RSS == 0 || u.FDs == 0 {
					t.Errorf("%s at %.0f s: %d bytes, %d fds; want both above zero", role, s.T, u.RSS, u.FDs)
				}
				n++
			}
		}
		if n < 10 {
			t.Errorf("%s: in %d samples, want 10 at least", role, n)
		}
	}

	// the stack is down: nothing of it runs, every port is free
	if left := processesUnder(h.run); len(left) > 0 {
		t.Errorf("after soak: still running %v", left)
	}
	for _, n := range h.cfg.Names() {
		for _, p := range h.cfg.Targets[n].TCP() {
			if err := stack.CheckPortFree(h.cfg.Address, p.Port); err != nil {
				t.Errorf("after soak: %v", err)
			}
		}
	}
	for _, p := range doc.Processes {
		proc := stack.Process{PID: p.PID}
		if p.Role != "k6" && proc.Alive() {
			t.Errorf("after soak: %s (pid %d) is alive", p.Role, p.PID)
		}
	}
}
