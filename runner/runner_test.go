package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
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

// A point of the body-size sweep tells its script its size (BODY_BYTES), and its result file
// is named by it: the sweep's runs of one cell over several sizes never overwrite each other.
func TestBodyJobEnvAndName(t *testing.T) {
	t.Parallel()
	r := &Runner{ResultsDir: "/results"}
	names := map[string]bool{}
	for _, n := range []float64{0, 1 << 10, 65536, 100000, 8 << 20} {
		j := Job{Scenario: "bodies-up", Target: "nginx", Proto: "h2", Body: &result.Body{Direction: result.Upload, Bytes: n}}
		if env := r.Env("id1", j, "/out.json"); !slices.Contains(env, fmt.Sprintf("BODY_BYTES=%.0f", n)) || !slices.Contains(env, "PROTO=h2") {
			t.Errorf("%.0f bytes: env lacks BODY_BYTES=%.0f or PROTO=h2: %v", n, n, env[len(env)-3:])
		}
		path, err := r.ResultPath("id1", j)
		if err != nil {
			t.Fatal(err)
		}
		names[filepath.Base(path)] = true
	}
	want := []string{"bodies-up-h2-0B-nginx.json", "bodies-up-h2-1KiB-nginx.json", "bodies-up-h2-64KiB-nginx.json", "bodies-up-h2-100000B-nginx.json", "bodies-up-h2-8MiB-nginx.json"}
	for _, w := range want {
		if !names[w] {
			t.Errorf("result files %v lack %s", names, w)
		}
	}
	off := r.Env("id1", Job{Scenario: "reused-h1c", Target: "nginx"}, "/out.json")
	if os.Getenv("BODY_BYTES") == "" && slices.ContainsFunc(off, func(e string) bool { return strings.HasPrefix(e, "BODY_BYTES=") }) {
		t.Error("a job off the sweep is given BODY_BYTES")
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
// `proxybench table` shows the row again (report's TestPrintRunsSkipped: "no h3", not a figure).
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
		// a point of the body-size sweep keeps its size in its name and its result
		{Job{Scenario: "bodies-down", Target: "pingora", Proto: "h3", Body: &result.Body{Direction: result.Download, Bytes: 1 << 20}}, "bodies-down-h3-1MiB-pingora.json", "h3"},
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
		if (got.Body == nil) != (tc.job.Body == nil) || got.Body != nil && *got.Body != *tc.job.Body {
			t.Errorf("%+v: saved body %+v, want the job's", tc.job, got.Body)
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
