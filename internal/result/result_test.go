package result

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A result file that cannot be read says which file and, for bad JSON, where in it.
func TestLoadResultSaysWhere(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string // want follows "<path>"
	}{
		{"truncated", "{\"schema\": 2,\n \"scenario\": \"reused-h1\", \"rps\": 12", ":2:35: unexpected end of JSON input (the file is truncated or a bracket is missing)"},
		{"empty", "", ":1:1: unexpected end of JSON input (the file is truncated or a bracket is missing)"},
		{"wrong type", "{\"schema\": 2, \"rps\": \"fast\"}", `:1:27: "rps" is a JSON string, want a number`},
		{"newer schema", `{"schema": 99}`, fmt.Sprintf(": result schema 99, this proxybench reads schema %d: written by another version of proxybench", Schema)},
		{"no schema", `{"scenario": "ws"}`, fmt.Sprintf(": no result schema (want %d): not a result file of proxybench", Schema)},
		{"no scenario", fmt.Sprintf(`{"schema": %d}`, Schema), ": no scenario: not a result file of proxybench"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "r.json")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadResult(p); err == nil || err.Error() != p+tc.want {
				t.Errorf("LoadResult error = %v, want %s%s", err, p, tc.want)
			}
		})
	}
}

func TestAllRequests(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(p, []byte(`{"schema":2,"scenario":"reused-h1c","requests":200,"k6":{"metrics":{"http_reqs":{"type":"counter","values":{"count":201,"rate":9}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := AllRequests(p); err != nil || n != 201 {
		t.Errorf("AllRequests = %v, %v; want 201 (setup's probe included)", n, err)
	}
	if err := os.WriteFile(p, []byte(`{"schema":2,"scenario":"reused-h1c","k6":{"metrics":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AllRequests(p); err == nil {
		t.Error("a result without http_reqs gave no error")
	}
}

// A schema-1 file is converted as it is read, and judged by the same verdict as a new one: the
// overload its script wrote is said again from its counts, its rate taken into the plan.
func TestLoadResultConvertsSchema1(t *testing.T) {
	t.Parallel()
	base := `"schema": 1, "testid": "t", "scenario": "equal-load", "target": "nginx", "mode": "equal-load",
		"proto": "h1c", "expected_proto": "HTTP/1.1", "route": "/", "requests": 1000, "failed_requests": 0,
		"checks": {"passes": 1000, "fails": 0}, "protos_seen": {"HTTP/1.1": 1000},
		"counts": {"unit": "requests", "answered": 1100, "iterations": 1000, "wrong_proto": 0, "bad_responses": {},
			"failed_checks": [], "failed_thresholds": [], "setup_ok": true, "findings": []},
		"overload": "written by the script, not read", `
	tests := []struct {
		name, body   string
		wantOverload string
		wantRate     float64
		wantP999     float64
	}{
		{
			"native, behind schedule", `"dropped_iterations": 0, "behind_schedule": 50, "config": {"rate": 2000},
			"plan": {"in_flight": 32}, "latency_ms": {"avg": 1, "min": 0.1, "p50": 1, "p90": 2, "p95": 2, "p99": 3, "p99.9": 4.5, "max": 9}`,
			"could not sustain 2000 req/s: 50 of 1000 requests were due while their connection still carried the one before", 2000, 4.5,
		},
		{
			"native, on schedule", `"dropped_iterations": 0, "behind_schedule": 5, "config": {"rate": 2000}, "plan": {"in_flight": 32}`,
			"", 2000, 0,
		},
		{
			"k6's open model, iterations dropped", `"dropped_iterations": 10, "config": {"rate": 500, "vus": [8, 16]},
			"plan": {"in_flight": 64}`,
			"could not sustain 500 req/s: 40 of 1040 requests not started on time (every VU busy)", 500, 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "r.json")
			if err := os.WriteFile(p, []byte("{"+base+tc.body+"}"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := LoadResult(p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Schema != Schema || r.Overload != tc.wantOverload || r.Plan.Rate != tc.wantRate || r.Latency.P999 != tc.wantP999 || !r.Valid {
				t.Errorf("schema %d, overload %q, rate %v, p99.9 %v, valid %v (%v); want %d, %q, %v, %v, valid",
					r.Schema, r.Overload, r.Plan.Rate, r.Latency.P999, r.Valid, r.Invalid, Schema, tc.wantOverload, tc.wantRate, tc.wantP999)
			}
		})
	}
}
