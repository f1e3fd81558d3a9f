package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// make calibrate runs k6 (on our native loop and on k6/http) and the native peers on the same
// load, reused and fresh, and compares what each costs per request: every client measured,
// every figure there, k6's share of the peer's frugality.
func TestCalibrate(t *testing.T) {
	h := harnessAt(t, 2050, "direct")
	out, err := h.proxybench(t, "calibrate", "-targets", "direct", "-protos", "h1c,h2", "-seconds", "2", "-requests", "300",
		"-connections", "4", "-streams", "4", "-testid", "e2e-calibrate")
	if err != nil {
		t.Fatalf("calibrate: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(h.results, "e2e-calibrate", "calibrate.json"))
	if err != nil {
		t.Fatal(err)
	}
	// read by its JSON names, as a user's script would
	var raw struct {
		Runs     []map[string]any `json:"runs"`
		Ceilings []struct {
			Proto       string  `json:"proto"`
			UnloadedP99 float64 `json:"unloaded_p99_ms"`
			Rate        float64 `json:"rate"`
			Steps       []struct {
				Rate float64 `json:"rate"`
				P99  float64 `json:"p99_ms"`
				Held bool    `json:"held"`
				Why  string  `json:"why"`
			} `json:"steps"`
			Err string `json:"error"`
		} `json:"ceilings"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range raw.Runs {
		key := r["client"].(string) + " " + r["mode"].(string) + " " + r["proto"].(string)
		seen[key] = true
		if e, _ := r["error"].(string); e != "" {
			t.Errorf("%s: %s", key, e)
			continue
		}
		for _, f := range []string{"requests", "rps", "client_cpu_us_per_req", "req_per_client_cpu_s", "target_cpu_us_per_req"} {
			if v, _ := r[f].(float64); v <= 0 {
				t.Errorf("%s: %s = %v, want a figure", key, f, r[f])
			}
		}
		if v, _ := r["vs_peer"].(float64); strings.HasPrefix(r["client"].(string), "k6-") && v <= 0 {
			t.Errorf("%s: no vs_peer", key)
		}
	}
	for _, want := range []string{
		"k6-native reused h1c", "k6-http reused h1c", "wrk reused h1c", "h2load reused h1c",
		"k6-native reused h2", "k6-http reused h2", "h2load reused h2",
		"k6-native fresh h1c", "k6-http fresh h1c", "wrk fresh h1c", "k6-native fresh h2", "k6-http fresh h2", "h2load fresh h2",
	} {
		if !seen[want] {
			t.Errorf("calibrate.json has no %s run:\n%s", want, data)
		}
	}
	// the open-model ladder (MODES=open, among all): h1c and h2, as -protos says; the highest
	// rate held is one of its steps that held, and every step above it did not
	if len(raw.Ceilings) != 2 || raw.Ceilings[0].Proto != "h1c" || raw.Ceilings[1].Proto != "h2" {
		t.Fatalf("ceilings = %+v, want h1c's and h2's", raw.Ceilings)
	}
	for _, c := range raw.Ceilings {
		if c.Err != "" || c.UnloadedP99 <= 0 || len(c.Steps) == 0 {
			t.Errorf("%s ceiling not measured: %+v", c.Proto, c)
		}
		for _, st := range c.Steps {
			if st.P99 <= 0 || st.Held != (st.Why == "") || (st.Held && st.Rate > c.Rate) || (!st.Held && st.Rate <= c.Rate) {
				t.Errorf("%s ceiling %v req/s, step %+v does not agree", c.Proto, c.Rate, st)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(h.run, "ceiling.json")); err != nil {
		t.Errorf("the ceiling is not kept for the bench: %v", err)
	}
	if !strings.Contains(out, "open-model ceiling against direct") {
		t.Errorf("calibrate does not print the ceiling:\n%s", out)
	}
	if !strings.Contains(out, "vs peer") || !strings.Contains(out, "h3: no native peer") {
		t.Errorf("calibrate's table is not printed:\n%s", out)
	}
}
