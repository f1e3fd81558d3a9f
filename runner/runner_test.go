package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
	"github.com/proxybench/proxybench/verdict"
)

func TestJobEnv(t *testing.T) {
	t.Parallel()
	classical := &stack.Negotiated{Version: "1.3", Group: "X25519"}
	pq := &stack.Negotiated{Version: "1.3", Group: "X25519MLKEM768"}
	r := &Runner{CAFile: "/ca.pem", Profile: "smoke", TargetsFile: "/t.json", Negotiated: map[string]map[stack.Protocol]*stack.Negotiated{
		"nginx": {"h1": classical, "h2": classical, "h3": classical},
		"caddy": {"h1": pq, "h2": pq},
	}}
	tests := []struct {
		job     Job
		godebug string // GODEBUG as set, "" for none
	}{
		{Job{Scenario: "reused-h1", Target: "nginx"}, "http2client=0,tlsmlkem=0"},
		{Job{Scenario: "fresh-h1", Target: "nginx"}, "http2client=0,tlsmlkem=0"},
		{Job{Scenario: "reused-h1c", Target: "nginx"}, ""},
		{Job{Scenario: "reused-h2", Target: "nginx"}, "tlsmlkem=0"},
		{Job{Scenario: "fresh-h3", Target: "nginx"}, "tlsmlkem=0"},
		{Job{Scenario: "json", Target: "nginx", Proto: "h1"}, "http2client=0,tlsmlkem=0"},
		{Job{Scenario: "json", Target: "nginx", Proto: "h2"}, "tlsmlkem=0"},
		// the pq profile's group is ML-KEM: the client must offer it
		{Job{Scenario: "fresh-h2", Target: "caddy"}, ""},
		{Job{Scenario: "fresh-h1", Target: "caddy"}, "http2client=0"},
		// nothing known of the target's TLS: Go's defaults
		{Job{Scenario: "fresh-h2", Target: "envoy"}, ""},
	}
	for _, tc := range tests {
		env := r.Env("id1", tc.job, "/out.json")
		for _, want := range []string{"K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false", "SSL_CERT_FILE=/ca.pem", "TARGET=" + tc.job.Target, "TESTID=id1", "SUMMARY_JSON=/out.json", "PROFILE=smoke", "TARGETS_FILE=/t.json"} {
			if !slices.Contains(env, want) {
				t.Errorf("%+v: env lacks %s", tc.job, want)
			}
		}
		got := "" // the last GODEBUG wins, as exec keeps it
		for _, e := range env {
			if v, ok := strings.CutPrefix(e, "GODEBUG="); ok {
				got = v
			}
		}
		if got != tc.godebug && os.Getenv("GODEBUG") == "" {
			t.Errorf("%+v: GODEBUG %q, want %q", tc.job, got, tc.godebug)
		}
	}
}

// A SEGMENTS left in the caller's environment would have a whole run skip the plan's totals
// (scenarios/lib/options.js): only RunSegments sets it.
func TestEnvDropsAStraySegments(t *testing.T) {
	t.Setenv("SEGMENTS", "2")
	env := (&Runner{}).Env("id1", Job{Scenario: "fresh-h2", Target: "nginx"}, "/out.json")
	for _, kv := range env {
		if strings.HasPrefix(kv, "SEGMENTS=") {
			t.Fatalf("k6 would see %s", kv)
		}
	}
}

func TestPrintTable(t *testing.T) {
	t.Parallel()
	n, rps := 2000.0, 4000.0
	results := []*result.Result{
		{
			Schema: 1, Target: "direct", Requests: 2000, RPS: &rps, NewConnections: &n, Latency: result.Stats{P50: 1.5, P95: 3, P99: 150},
			ProtosSeen: map[string]float64{"HTTP/2.0": 2000}, Valid: true,
			UpstreamConns: &result.UpstreamConns{Opened: 2001, Requests: 2001, Per1k: 1000},
			Cost:          &result.Cost{TargetCPUMicros: 412.4, ClientCPUMicros: 180},
		},
		{
			Schema: 1, Target: "nginx", Requests: 1990, ProtosSeen: map[string]float64{"HTTP/2.0": 1980, "HTTP/1.1": 10},
			Valid: false, Invalid: []string{"10 responses over HTTP/1.1"},
		},
		{Target: "caddy", Err: "k6 run fresh-h2 (target caddy): exit status 107"},
	}
	var buf bytes.Buffer
	PrintTable(&buf, "fresh-h2", results)
	out := buf.String()
	for _, want := range []string{
		"== fresh-h2", "new conns", "upstream conns/1k req", "1000.0", "4000", "1.50", "150", "HTTP/2.0",
		// what the target's new connections cost it leads, after the target and protocol
		"target  proto  target CPU µs/conn  reqs",
		"HTTP/1.1×10 HTTP/2.0×1980", "invalid: nginx : 10 responses over HTTP/1.1",
		"ERROR", "caddy: k6 run fresh-h2 (target caddy): exit status 107",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, " yes") != 1 || strings.Count(out, " NO") != 1 {
		t.Errorf("want one valid and one invalid row:\n%s", out)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "direct 412 2000 4000") {
		t.Errorf("direct's row does not lead with its 412 µs per new connection:\n%s", out)
	}
}

// TestPrintTableTimings: a paced probe's longest gap is a column of its own, marked * when the
// run saw outside load; stalls and outside load are notes, never a reason the row is invalid.
func TestPrintTableTimings(t *testing.T) {
	t.Parallel()
	gaps := func(p50, maxGap float64) map[string]result.Stats {
		return map[string]result.Stats{"sse_first_event": {P50: 0.4}, "sse_event_gap": {P50: p50, Max: maxGap}}
	}
	results := []*result.Result{
		{
			Schema: 1, Target: "direct", Proto: "h1c", Requests: 12, Extra: gaps(150.5, 236.4), Valid: true,
			Pacing:      &verdict.Pacing{Part: "event", Parts: "events", IntervalMS: 150, TogetherMS: 15, StallOverMS: 187.5, Responses: 12, Stalls: 1, TogetherHeld: 1},
			OutsideLoad: &result.OutsideLoad{CPUShare: 0.51, Over: true},
		},
		{
			Schema: 1, Target: "nginx", Proto: "h1c", Requests: 12, Extra: gaps(150.4, 151.2), Valid: true,
			Pacing:      &verdict.Pacing{Part: "event", Parts: "events", IntervalMS: 150, TogetherMS: 15, StallOverMS: 187.5, Responses: 12},
			OutsideLoad: &result.OutsideLoad{CPUShare: 0.04},
		},
	}
	var buf bytes.Buffer
	PrintTable(&buf, "sse", results)
	out := buf.String()
	for _, want := range []string{
		"sse_event_gap p50", "sse_event_gap max", "236*", " 151 ",
		"direct h1c: * outside load: other processes used 51% of the CPU",
		"stalled: 1 of 12 responses had a gap over 187.5 ms (a figure, not a verdict",
		"events released together in 1 of 12 responses: not more than half, so not judged",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, " yes") != 2 || strings.Contains(out, "invalid") || strings.Contains(out, "nginx h1c:") {
		t.Errorf("want two valid rows and no note for nginx:\n%s", out)
	}
}

func TestRequires(t *testing.T) {
	t.Parallel()
	tests := []struct {
		job  Job
		want string
	}{
		{Job{Scenario: "reused-h3", Target: "nginx"}, "h3"},
		{Job{Scenario: "fresh-h1c", Target: "nginx"}, "h1c"},
		{Job{Scenario: "reused-h2", Target: "nginx"}, "h2"},
		{Job{Scenario: "json", Target: "nginx", Proto: "h3"}, "h3"},
		{Job{Scenario: "ws", Target: "nginx", Proto: "h1c"}, "h1c"},
	}
	for _, tc := range tests {
		if got := tc.job.Requires(); got != tc.want {
			t.Errorf("%+v.Requires() = %q, want %q", tc.job, got, tc.want)
		}
	}
	// every cell of the matrix needs a protocol the stack knows
	known := []string{"h1", "h1c", "h2", "h3"}
	for _, sc := range Throughput {
		if need := JobOf(sc, "nginx", "").Requires(); !slices.Contains(known, need) {
			t.Errorf("%s requires %q", sc.Name, need)
		}
	}
}

// TestSkip: a cell whose target lacks the protocol is written as a result of its own, so that
// `proxybench table` shows the row again, and the table says "no h3" instead of a figure.
func TestSkip(t *testing.T) {
	t.Parallel()
	r := &Runner{ResultsDir: t.TempDir(), Profile: "smoke"}
	tests := []struct {
		job       Job
		file      string
		wantProto string
	}{
		{Job{Scenario: "fresh-h3", Target: "nginx"}, "fresh-h3-nginx.json", "h3"},
		{Job{Scenario: "sse", Target: "haproxy", Proto: "h3"}, "sse-h3-haproxy.json", "h3"},
	}
	for _, tc := range tests {
		res := r.Skip("id1", tc.job, []string{"h1", "h1c", "h2"})
		if res.Err != "" {
			t.Fatal(res.Err)
		}
		file := filepath.Join(r.ResultsDir, "id1", tc.file)
		if data, err := os.ReadFile(file); err != nil || result.Validate(data) != nil {
			t.Errorf("%+v: the cell's file does not follow the schema: %v, %v\n%s", tc.job, err, result.Validate(data), data)
		}
		got, err := result.LoadResult(file)
		if err != nil {
			t.Fatalf("%+v: %v", tc.job, err)
		}
		if got.Skipped != "no h3" || got.Proto != tc.wantProto || got.ExpectedProto != "HTTP/3.0" || got.Valid || len(got.Invalid) != 0 ||
			!strings.Contains(got.SkipReason, tc.job.Target+" does not serve h3 (it serves h1, h1c, h2)") {
			t.Errorf("%+v: saved %+v", tc.job, got)
		}
		var buf bytes.Buffer
		PrintTable(&buf, tc.job.Scenario, []*result.Result{got})
		out := buf.String()
		for _, want := range []string{"no h3", "not run: " + tc.job.Target + " h3: " + tc.job.Target + " does not serve h3"} {
			if !strings.Contains(out, want) {
				t.Errorf("%+v: table lacks %q:\n%s", tc.job, want, out)
			}
		}
		if strings.Contains(out, "invalid") || strings.Contains(out, "ERROR") {
			t.Errorf("%+v: a skipped cell reads as invalid:\n%s", tc.job, out)
		}
	}
}

func TestModeOf(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"reused-h1c": "reused", "fresh-h3": "fresh", "json": "probe", "ws": "probe", "equal-load": EqualLoadMode,
	}
	for sc, want := range tests {
		if got := ModeOf(sc); got != want {
			t.Errorf("ModeOf(%q) = %q, want %q", sc, got, want)
		}
	}
}

func TestK6Scenario(t *testing.T) {
	t.Parallel()
	tests := []struct{ scenario, proto, want string }{
		{"reused-h2", "h2", "reused-h2"},
		{"json", "h1c", "json-h1c"},
		{"ws", "h1", "ws-h1"},
		{"equal-load", "h3", "equal-load-h3"},
		{"json", "", "json"},
	}
	for _, tc := range tests {
		if got := K6Scenario(tc.scenario, tc.proto); got != tc.want {
			t.Errorf("K6Scenario(%q, %q) = %q, want %q", tc.scenario, tc.proto, got, tc.want)
		}
	}
}
