package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/settings"
	"github.com/proxybench/proxybench/stack"
)

// badInputEnv isolates a test from the user's environment and stack: the repository's
// targets.json, an empty run directory (no stack up) and every variable `make` may export
// cleared, so that each row sets only what it tests.
func badInputEnv(t *testing.T) {
	t.Helper()
	targets, err := filepath.Abs(filepath.Join("..", "..", "targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TARGETS_FILE", targets)
	t.Setenv("PROXYBENCH_RUN", t.TempDir())
	t.Setenv("PROXYBENCH_CACHE", t.TempDir())
	t.Setenv("RESULTS_DIR", t.TempDir())
	for _, k := range append([]string{
		"SCENARIO", "TARGET", "TARGETS", "PROFILE", "PROTO", "PROTOS", "MODES", "RUNS",
		"DASHBOARD", "RESTART", "PIN", "TESTID", "TLS_PROFILE", "PROXYBENCH_PROXIES", "TARGET_URL", "MODE", "SEGMENTS",
		"STACK", "STACK_TOKEN", "STACK_LISTEN",
	}, append(settings.Knobs(settings.Duration), settings.Knobs(settings.Count)...)...) {
		t.Setenv(k, "")
	}
}

// Every bad input to `proxybench k6` and `proxybench bench -check` (what `make k6` and
// `make bench` run first), and a bad address to `proxybench up`, is an error that says what is
// valid, before anything starts.
func TestBadInputSaysWhatIsValid(t *testing.T) {
	badInputEnv(t)
	scenarios := strings.Join(engine.Scenarios(), ", ")
	cfg, err := stack.LoadConfig(os.Getenv("TARGETS_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	validTargets := "valid targets are all, " + strings.Join(cfg.Names(), ", ")
	tests := []struct {
		name string
		cmd  string            // k6 or bench (run with -check)
		args []string          // flags
		env  map[string]string // the environment make exports
		want string            // the whole error, or a part of it ending in what is valid
	}{
		// k6
		{"no scenario", "k6", nil, nil, "no SCENARIO: try `make k6 SCENARIO=fresh-h2`; scenarios are " + scenarios},
		{"unknown scenario", "k6", []string{"-scenario", "reused-h4"}, nil, `unknown SCENARIO "reused-h4": scenarios are ` + scenarios},
		{"scenario from env", "k6", nil, map[string]string{"SCENARIO": "fast"}, `unknown SCENARIO "fast": scenarios are ` + scenarios},
		{"unknown target", "k6", []string{"-scenario", "reused-h1", "-targets", "ngnix"}, nil, `unknown target "ngnix": ` + validTargets},
		{"target list with all", "k6", []string{"-scenario", "reused-h1", "-targets", "all,nginx"}, nil, `target list "all,nginx": all stands alone (every target), not in a list; ` + validTargets},
		{"empty target list", "k6", []string{"-scenario", "reused-h1", "-targets", ","}, nil, `target list "," names no target: ` + validTargets},
		{"k6 profile", "k6", []string{"-scenario", "reused-h1", "-profile", "huge"}, nil, `unknown PROFILE "huge": valid profiles are smoke, stable, stress`},
		{"proto of a probe", "k6", []string{"-scenario", "ws", "-proto", "h3"}, nil, `unknown PROTO "h3" for probe ws: valid are h1, h1c (empty: each)`},
		{"proto of a load scenario", "k6", []string{"-scenario", "reused-h1", "-proto", "h2"}, nil, "PROTO=h2: PROTO applies to the probes only (json, upload, stream, sse, ws); reused-h1 names its protocol itself: leave PROTO empty"},
		{"k6 unknown flag", "k6", []string{"-scenario", "reused-h1", "-duration", "5s"}, nil, "flag provided but not defined: -duration: valid flags are -profile, -proto, -scenario, -segments, -targets, -testid; k6's own flags go after -- (make: ARGS='…')"},
		{"k6 testid", "k6", []string{"-scenario", "reused-h1", "-testid", "a/b"}, nil, `TESTID "a/b": letters, digits, ".", "_" or "-", 128 at most (it names the results folder)`},
		{"k6 duration", "k6", []string{"-scenario", "reused-h1"}, map[string]string{"DURATION": "10"}, `DURATION="10": want a duration longer than zero such as 10s, 1m30s or 500ms (empty: the profile's)`},
		{"k6 connections", "k6", []string{"-scenario", "reused-h1"}, map[string]string{"CONNECTIONS": "0"}, `CONNECTIONS="0": want a whole number of at least 1 (empty: the profile's)`},

		// bench
		{"bench unknown target", "bench", []string{"-targets", "nginx,ngnix"}, nil, `unknown target "ngnix": ` + validTargets},
		{"bench target from env", "bench", nil, map[string]string{"TARGET": "apache"}, `unknown target "apache": ` + validTargets},
		{"bench profile", "bench", []string{"-profile", ""}, nil, `unknown PROFILE "": valid profiles are smoke, stable, stress`},
		{"protos", "bench", []string{"-protos", "h2,quic"}, nil, `unknown PROTOS "quic": valid are all, or a comma-separated list of h1, h1c, h2, h3`},
		{"protos with all", "bench", []string{"-protos", "all,h2"}, nil, `PROTOS="all,h2": all stands alone, not in a list: valid are all, or a comma-separated list of h1, h1c, h2, h3`},
		{"protos from env", "bench", nil, map[string]string{"PROTOS": "http3"}, `unknown PROTOS "http3": valid are all, or a comma-separated list of h1, h1c, h2, h3`},
		{"modes", "bench", []string{"-modes", "reused,warm"}, nil, `unknown MODES "warm": valid are all, or a comma-separated list of reused, fresh, probe, capacity, idle, connections, bodies`},
		{"body sizes", "bench", []string{"-modes", "bodies", "-body-sizes", "0,1KiB,9MiB"}, nil, `BODY_SIZES: 9MiB is over 8MiB, the largest body the upstream serves and takes`},
		{"body size", "bench", []string{"-body-sizes", "64k"}, nil, `BODY_SIZES: "64k" is not a size: bytes (65536), KiB or MiB (64KiB, 1MiB)`},
		{"modes empty", "bench", []string{"-modes", " , "}, nil, `MODES=" , " names nothing: valid are all, or a comma-separated list of reused, fresh, probe, capacity, idle, connections, bodies`},
		{"runs zero", "bench", []string{"-runs", "0"}, nil, `RUNS="0": want a whole number from 1 to 100 (runs per throughput cell; empty: the profile's, smoke 1, stable 5, stress 3)`},
		{"runs word", "bench", nil, map[string]string{"RUNS": "five"}, `RUNS="five": want a whole number from 1 to 100`},
		{"runs too many", "bench", []string{"-runs", "101"}, nil, `RUNS="101": want a whole number from 1 to 100`},
		{"dashboard switch", "bench", nil, map[string]string{"DASHBOARD": "on"}, `DASHBOARD="on": a switch is 1, true or yes (on), or empty, 0, false or no (off)`},
		{"restart switch", "bench", nil, map[string]string{"RESTART": "2"}, `RESTART="2": a switch is 1, true or yes (on), or empty, 0, false or no (off)`},
		{"dashboard flag value", "bench", []string{"-dashboard=maybe"}, nil, `invalid boolean value "maybe" for -dashboard: parse error: want true or false`},
		{"bench unknown flag", "bench", []string{"-run", "3"}, nil, "flag provided but not defined: -run: valid flags are -body-sizes, -calibrate-seconds, -capacity-p99, -capacity-protos, -check, -connection-levels, -dashboard, -idle-connections, -modes, -pin, -profile, -protos, -restart, -runs, -targets, -testid;"},
		{"capacity goal", "bench", nil, map[string]string{"CAPACITY_P99": "fast"}, `CAPACITY_P99="fast": want the latency goal in ms, a number above 0 and at most 60000 (default 10)`},
		{"capacity protocol", "bench", []string{"-capacity-protos", "h1c,h3"}, nil, `unknown CAPACITY_PROTOS "h3": valid are all, or a comma-separated list of h1c, h1, h2`},
		{"capacity over no protocol", "bench", []string{"-modes", "reused,capacity", "-protos", "h1,h2,h3"}, nil, `MODES names capacity and CAPACITY_PROTOS (h1c) names no protocol of PROTOS (h1,h2,h3): nothing would be searched; give CAPACITY_PROTOS=h1,h2, or leave capacity out of MODES`},
		{"capacity over h3", "bench", []string{"-modes", "capacity", "-protos", "h3"}, nil, `give PROTOS one of h1c, h1, h2 (the search runs the native open model), or leave capacity out of MODES`},
		{"idle connections", "bench", nil, map[string]string{"IDLE_CONNECTIONS": "0"}, `IDLE_CONNECTIONS="0": want a whole number of connections from 1 to 25000 (default 10000)`},
		{"connection levels falling", "bench", nil, map[string]string{"CONNECTION_LEVELS": "64,16"}, `CONNECTION_LEVELS="64,16": want connection counts from 1 to 25000, comma-separated, each above the one before`},
		{"sweep mode in a list", "bench", []string{"-modes", "idle,warm"}, nil, `unknown MODES "warm": valid are all, or a comma-separated list of reused, fresh, probe, capacity, idle, connections`},
		{"pin role", "bench", []string{"-pin", "clients=0"}, nil, `PIN="clients=0": unknown role "clients": roles are client, proxy, upstream`},
		{"warmup", "bench", nil, map[string]string{"WARMUP": "-1s"}, `WARMUP="-1s": want a duration longer than zero such as 10s, 1m30s or 500ms, or 0 for none (empty: the profile's)`},
		{"duration zero", "bench", nil, map[string]string{"DURATION": "0s"}, `DURATION="0s": want a duration longer than zero`},
		{"streams", "bench", nil, map[string]string{"STREAMS": "1.5"}, `STREAMS="1.5": want a whole number of at least 1`},
		{"requests", "bench", nil, map[string]string{"REQUESTS": "lots"}, `REQUESTS="lots": want a whole number of at least 1`},
		{"fresh connections", "bench", nil, map[string]string{"FRESH_CONNECTIONS": "-4"}, `FRESH_CONNECTIONS="-4": want a whole number of at least 1`},
		{"samples", "bench", nil, map[string]string{"SAMPLES": "0"}, `SAMPLES="0": want a whole number of at least 1`},
		{"upload bytes", "bench", nil, map[string]string{"UPLOAD_BYTES": "256k"}, `UPLOAD_BYTES="256k": want a whole number of at least 1`},
		{"upload bytes beyond k6", "bench", nil, map[string]string{"UPLOAD_BYTES": "9007199254740992"}, `UPLOAD_BYTES="9007199254740992": want a whole number of at least 1`},
		{"every bad knob at once", "bench", nil, map[string]string{"SAMPLES": "0", "DURATION": "1x"}, "DURATION=\"1x\": want a duration longer than zero such as 10s, 1m30s or 500ms (empty: the profile's)\nSAMPLES=\"0\": want"},
		{"calibrate seconds", "bench", nil, map[string]string{"CALIBRATE_SECONDS": "1"}, `CALIBRATE_SECONDS="1": want 0 (no calibration) or a whole number of seconds from 2 to 60`},
		{"run timeout word", "bench", nil, map[string]string{"RUN_TIMEOUT": "soon"}, `RUN_TIMEOUT="soon": want a duration such as 90s or 10m after which a k6 run is stopped as hung, or 0 for never (empty: 5m0s plus DURATION and WARMUP)`},
		{"client", "k6", []string{"-scenario", "reused-h1c"}, map[string]string{"CLIENT": "wrk"}, `CLIENT="wrk": want native (our native load loop, the default) or k6 (the k6/http scripts, as a stock k6 runs them)`},
		{"calibrate mode", "calibrate", []string{"-modes", "probe"}, nil, `unknown MODES "probe": valid are all, or a comma-separated list of reused, fresh`},
		{"calibrate requests", "calibrate", []string{"-requests", "0"}, nil, "-requests 0: want a whole number from 1 to 1000000"},
		{"run timeout unitless", "k6", []string{"-scenario", "json"}, map[string]string{"RUN_TIMEOUT": "300"}, `RUN_TIMEOUT="300": want a duration`},
		{"stack not https", "k6", []string{"-scenario", "reused-h1c"}, map[string]string{"STACK": "http://192.0.2.10:7443"}, `STACK="http://192.0.2.10:7443": want https://IP:PORT, the agent's address on the stack host`},
		{"stack by name", "k6", []string{"-scenario", "reused-h1c"}, map[string]string{"STACK": "https://stackhost:7443"}, `STACK="https://stackhost:7443": "stackhost" is not an IP address`},
		{"stack without its token", "k6", []string{"-scenario", "reused-h1c"}, map[string]string{"STACK": "https://192.0.2.10:7443"}, "(copy run/agent-token.json from the stack host; STACK_TOKEN names another path)"},
		{"segments", "k6", []string{"-scenario", "fresh-h2", "-segments", "two"}, nil, `SEGMENTS="two": want a whole number of at least 1, the k6 instances one run is split over (empty or 1: one instance)`},
		{"segments from env", "k6", []string{"-scenario", "fresh-h2"}, map[string]string{"SEGMENTS": "0"}, `SEGMENTS="0": want a whole number of at least 1`},
		{"segments of a probe", "k6", []string{"-scenario", "sse", "-segments", "2"}, nil, "SEGMENTS=2: sse runs one VU, which cannot be split over k6 instances: run it with SEGMENTS=1 (or none); reused-* and fresh-* split"},
		{"remote target to k6", "k6", []string{"-scenario", "reused-h2"}, map[string]string{"TARGET_URL": "https://proxy.example:8443"}, "TARGET_URL=https://proxy.example:8443: make k6 measures the targets of the local stack; a remote target runs as `bin/k6 run -e TARGET_URL=https://proxy.example:8443 scenarios/<scenario>.js` or `make k6-cloud MODE=cloud`"},
		{"remote target to bench", "bench", nil, map[string]string{"TARGET_URL": "http://10.0.0.5"}, "TARGET_URL=http://10.0.0.5: make bench measures the targets of the local stack"},
		{"cloud mode", "k6-cloud", []string{"-scenario", "reused-h2", "-mode", "aws"}, nil, `MODE="aws": want local (run here with bin/k6, stream to k6 cloud) or cloud (Grafana's load generators, against TARGET_URL)`},
		{"cloud without target url", "k6-cloud", []string{"-scenario", "reused-h2", "-mode", "cloud"}, nil, "MODE=cloud needs TARGET_URL"},
		{"cloud split", "k6-cloud", []string{"-scenario", "reused-h2"}, map[string]string{"SEGMENTS": "2"}, "SEGMENTS=2: make k6-cloud runs one k6"},
		{"cloud local with target url", "k6-cloud", []string{"-scenario", "reused-h2", "-target-url", "https://x"}, nil, "TARGET_URL is for MODE=cloud"},
		{"tls profile", "bench", nil, map[string]string{"TLS_PROFILE": "rsa"}, `TLS_PROFILE=rsa: TLS profile "rsa" is not in tls_profiles: valid profiles are pq, x25519`},
		{"stack listen on a name", "up", []string{"-listen", "stackhost"}, nil, `-listen (STACK_LISTEN) "stackhost": want the IPv4 address a load host reaches this host on (or ip:port, the port being the agent's)`},
		{"stack listen everywhere", "up", nil, map[string]string{"STACK_LISTEN": "0.0.0.0"}, `-listen (STACK_LISTEN) "0.0.0.0": an unspecified address binds every interface`},
		{"stack listen elsewhere", "up", nil, map[string]string{"STACK_LISTEN": "192.0.2.1:7443"}, `-listen (STACK_LISTEN) "192.0.2.1:7443": not an address of this host`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			err := runCmd(tc.cmd, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("proxybench %s %q: error %v\nwant one containing %q", tc.cmd, tc.args, err, tc.want)
			}
		})
	}
}

// runCmd runs proxybench k6, or bench or calibrate with -check, or up (with a bad address): none
// ever starts anything here.
func runCmd(cmd string, args []string) error {
	switch cmd {
	case "up":
		return cmdUp(context.Background(), args)
	case "bench":
		return cmdBench(context.Background(), append([]string{"-check"}, args...))
	case "calibrate":
		return cmdCalibrate(context.Background(), append([]string{"-check"}, args...))
	case "k6-cloud":
		return cmdK6Cloud(context.Background(), args)
	}
	return cmdK6(context.Background(), args)
}

// The rows above are not failing for a reason of the harness's own: good input passes the
// same checks.
func TestGoodInputPassesBenchCheck(t *testing.T) {
	badInputEnv(t)
	for _, env := range []map[string]string{
		nil,
		{"TARGETS": "nginx, caddy,nginx", "PROTOS": "h2,h1c", "MODES": "reused", "RUNS": "3", "DASHBOARD": "yes", "RESTART": "0"},
		{"DURATION": "1m30s", "WARMUP": "0", "CONNECTIONS": "64", "STREAMS": "10", "REQUESTS": "500", "FRESH_CONNECTIONS": "8", "SAMPLES": "50", "UPLOAD_BYTES": "262144"},
		{"WARMUP": "500ms", "DURATION": " 10s ", "PROFILE": "stress"},
		{"RUN_TIMEOUT": "0"},
		{"RUN_TIMEOUT": "90s"},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		if err := runCmd("bench", nil); err != nil {
			t.Errorf("bench -check with %v: %v", env, err)
		}
		for k := range env {
			t.Setenv(k, "")
		}
	}
}

func TestRunTimeout(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want time.Duration
	}{
		{nil, runSlack},
		{map[string]string{"DURATION": "10m", "WARMUP": "30s"}, runSlack + 10*time.Minute + 30*time.Second},
		{map[string]string{"DURATION": "1m30s", "WARMUP": "0"}, runSlack + 90*time.Second},
		{map[string]string{"RUN_TIMEOUT": "90s", "DURATION": "10m"}, 90 * time.Second},
		{map[string]string{"RUN_TIMEOUT": "1h"}, time.Hour},
		{map[string]string{"RUN_TIMEOUT": "0"}, 0},
		{map[string]string{"RUN_TIMEOUT": "0s"}, 0},
	} {
		got, err := runTimeout(func(k string) string { return tc.env[k] })
		if err != nil || got != tc.want {
			t.Errorf("runTimeout with %v = %v, %v; want %v", tc.env, got, err, tc.want)
		}
	}
}

// `make report ID=…` and `make compare A=… B=…` are what the warnings tell the user to run
// again, when the folder is one of results/.
func TestMakeCmd(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"results/20260101-120000", "make report ID=20260101-120000"},
		{"/home/u/proxybench/results/x/", "make report ID=x"},
		{"/tmp/elsewhere", "proxybench report /tmp/elsewhere"},
	} {
		if got := makeCmd("report", "ID", tc.dir); got != tc.want {
			t.Errorf("makeCmd(%q) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}

// captureOutput runs f with os.Stdout and os.Stderr going to files, and returns what each got.
func captureOutput(t *testing.T, f func() error) (stdout, stderr string, err error) {
	t.Helper()
	out, errf := filepath.Join(t.TempDir(), "stdout"), filepath.Join(t.TempDir(), "stderr")
	o, e := mustCreate(t, out), mustCreate(t, errf)
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = o, e
	err = f()
	os.Stdout, os.Stderr = oldOut, oldErr
	o.Close()
	e.Close()
	ob, _ := os.ReadFile(out)
	eb, _ := os.ReadFile(errf)
	return string(ob), string(eb), err
}

func mustCreate(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeRun writes a minimal valid result file of reused-h1 against target.
func writeRun(t *testing.T, dir, target string, rps float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf(`{"schema": 1, "testid": %q, "scenario": "reused-h1", "target": %q, "mode": "reused", "proto": "h1",
  "profile": "smoke", "duration_s": 10, "requests": %g, "rps": %g, "latency_ms": {"p50": 1, "p99": 3},
  "valid": true, "invalid": []}
`, filepath.Base(dir), target, rps*10, rps)
	if err := os.WriteFile(filepath.Join(dir, "reused-h1-"+target+".json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// make report and make compare: a truncated result file and one of another schema are left
// out and named in a warning that says what to do, the report is still built from the rest,
// and a JSON that is no result (k6's --summary-export) is skipped without a word.
func TestReportAndCompareSayWhatTheyLeaveOut(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results")
	a, b := filepath.Join(results, "a"), filepath.Join(results, "b")
	for _, dir := range []string{a, b} {
		writeRun(t, dir, "direct", 10000)
		writeRun(t, dir, "nginx", 8000)
		mustWrite(t, filepath.Join(dir, "k6-summary.json"), `{"metrics": {}, "root_group": {}}`)
	}
	truncated := filepath.Join(b, "reused-h1-caddy.json")
	mustWrite(t, truncated, "{\"schema\": 1, \"scenario\": \"reused-h1\", \"target\": \"caddy\",\n  \"latency_ms\": {\"p50\": 1")
	other := filepath.Join(b, "reused-h1-envoy.json")
	mustWrite(t, other, fmt.Sprintf(`{"schema": %d, "scenario": "reused-h1", "target": "envoy"}`, result.Schema+1))

	stdout, stderr, err := captureOutput(t, func() error { return cmdReport(context.Background(), []string{b}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, filepath.Join(b, "report.md")) {
		t.Errorf("report printed %q, want the report's paths", stdout)
	}
	for _, w := range []string{
		"report: warning: 2 result file(s) of " + b + " could not be read; every other run is counted, these are left out:",
		"  " + truncated + ":2:25: unexpected end of JSON input (the file is truncated or a bracket is missing)",
		"  " + other + fmt.Sprintf(": result schema %d, this proxybench reads schema %d: written by another version of proxybench", result.Schema+1, result.Schema),
		"report: their runs are not measured: run those cells again, or move the files out of " + b + ", then run `make report ID=b` again",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("report's stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "k6-summary.json") {
		t.Errorf("report warns of k6's summary export, which is no result:\n%s", stderr)
	}
	if md, err := os.ReadFile(filepath.Join(b, "report.md")); err != nil || !strings.Contains(string(md), "nginx") {
		t.Errorf("report.md from the readable files: %v", err)
	}

	stdout, stderr, err = captureOutput(t, func() error { return cmdCompare(context.Background(), []string{a, b}) })
	if err != nil {
		t.Fatal(err)
	}
	if w := "note: B (b) leaves out 2 result file(s) it could not read, so their runs are missing above: reused-h1-caddy.json, reused-h1-envoy.json"; !strings.Contains(stdout, w) {
		t.Errorf("compare's output lacks %q:\n%s", w, stdout)
	}
	for _, w := range []string{"compare: B: warning: 2 result file(s) of " + b, "then run `make compare A=a B=b` again"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("compare's stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "compare: A") {
		t.Errorf("compare warns of A, which has nothing unreadable:\n%s", stderr)
	}
}
