// Package e2e brings a real native stack up on loopback (on ports of its own, so a stack a
// user left up is not disturbed), runs every scenario with the real k6 at a tiny size against
// every target, checks that every result is valid, and brings the stack down again.
//
// It needs what `make setup` builds and installs; `make test` runs it after that.
package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/stack"
)

// defaultPortOffset moves every port of targets.json so the test stack never collides with one
// a user has up; E2E_PORT_OFFSET picks another (two e2e runs on one machine, each its own).
const defaultPortOffset = 20000

func portOffset(t *testing.T) int {
	t.Helper()
	v := os.Getenv("E2E_PORT_OFFSET")
	if v == "" {
		return defaultPortOffset
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 50000 {
		t.Fatalf("E2E_PORT_OFFSET=%q: want a whole number in 1..50000", v)
	}
	return n
}

// Environment: E2E_PORT_OFFSET (default 20000) moves every port; E2E_TARGETS (default: every
// target of targets.json) runs a comma-separated subset, direct always included.

// Tiny sizes: enough requests to be meaningful, small enough for a 2-core CI machine.
var tinyEnv = []string{
	"DURATION=2s", "WARMUP=1s", "CONNECTIONS=4", "STREAMS=4",
	"REQUESTS=120", "FRESH_CONNECTIONS=4", "SAMPLES=2",
	// the native fresh loop goes on past REQUESTS until then
	"FRESH_DURATION=" + freshFloor.String(),
	"CALIBRATE_SECONDS=0", // a bench's client calibration: TestBenchReport's alone
}

const freshRequests = 120

// freshFloor is the native fresh loop's least window in these runs: long enough that 120
// cleartext requests (0.05 s) end well before it.
const freshFloor = time.Second

type harness struct {
	root, run, results, targets string
	cfg                         *stack.Config
	served                      map[string][]string // protocols each target serves, from state.json
	missing                     map[string]string   // optional targets not installed (GoDoxy), from state.json
	influx                      *observe.State      // where k6 runs stream, when set (streamToInfluxDB)
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	skipShort(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"k6", "upstream", "proxybench"} {
		if _, err := os.Stat(filepath.Join(root, "bin", bin)); err != nil {
			t.Fatalf("bin/%s is missing: run `make test` (it builds and installs everything first)", bin)
		}
	}
	tmp := t.TempDir()
	h := &harness{root: root, run: filepath.Join(tmp, "run"), results: filepath.Join(tmp, "results"), targets: filepath.Join(tmp, "targets.json")}
	// every result file the test's scripts and runner wrote is held to the one schema (before
	// the temporary folder goes: cleanups run last registered first)
	t.Cleanup(func() { checkResultFiles(t, h.results) })
	cfg, err := stack.LoadConfig(filepath.Join(root, "targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	if spec := os.Getenv("E2E_TARGETS"); spec != "" {
		// a subset of the targets (direct is always in): the others are left out of the test's
		// targets file, so neither installed, started nor measured
		names, err := cfg.Select(spec)
		if err != nil {
			t.Fatalf("E2E_TARGETS: %v", err)
		}
		keep := map[string]stack.Ports{stack.Direct: cfg.Targets[stack.Direct]}
		for _, n := range names {
			keep[n] = cfg.Targets[n]
		}
		cfg.Targets = keep
	}
	off := portOffset(t)
	cfg.Upstream.H1C += off
	for n, p := range cfg.Targets {
		cfg.Targets[n] = p.Offset(off)
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(h.targets, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h.cfg = cfg
	return h
}

// skipShort skips an end-to-end test in the fast tier (`make check`: go test -short).
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a stack: the binaries and targets `make setup` installs, real servers on loopback; `make test` runs it")
	}
}

// harnessAt is a harness on ports of its own, offset beyond the default stack's (each test
// that brings a stack up takes its own offset, so that one left behind cannot collide), for
// direct plus targets (E2E_TARGETS' form).
func harnessAt(t *testing.T, offset int, targets string) *harness {
	t.Helper()
	off := portOffset(t) + offset
	if off > 50000 {
		off -= 2 * offset
	}
	t.Setenv("E2E_PORT_OFFSET", strconv.Itoa(off))
	t.Setenv("E2E_TARGETS", targets)
	return newHarness(t)
}

func (h *harness) env(extra ...string) []string {
	env := append(os.Environ(),
		"TARGETS_FILE="+h.targets, "PROXYBENCH_RUN="+h.run, "RESULTS_DIR="+h.results,
		"K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false")
	env = append(env, tinyEnv...)
	if h.influx != nil {
		env = append(env, h.influx.K6Env()...)
	}
	return append(env, extra...)
}

// proxybench runs the real CLI, as `make` does.
func (h *harness) proxybench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return h.proxybenchEnv(t, nil, args...)
}

// proxybenchEnv runs the real CLI with env over the tiny runs' settings.
func (h *harness) proxybenchEnv(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), args...)
	cmd.Dir = h.root
	cmd.Env = h.env(env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func TestScenariosPassInspect(t *testing.T) {
	h := newHarness(t)
	scripts, _ := filepath.Glob(filepath.Join(h.root, "scenarios", "*.js"))
	native, _ := filepath.Glob(filepath.Join(h.root, "scenarios", "native", "*.js"))
	if len(native) != 9 {
		t.Errorf("found %d native scenarios (scenarios/native/), want reused-h1c, reused-h1, reused-h2, fresh-h1c, fresh-h1, fresh-h2, equal-load, bodies-down and bodies-up", len(native))
	}
	scripts = append(scripts, native...)
	if len(scripts) < len(runner.Throughput)+len(runner.Probes) {
		t.Fatalf("found %d scenario scripts, want at least %d", len(scripts), len(runner.Throughput)+len(runner.Probes))
	}
	for _, s := range scripts {
		t.Run(filepath.Base(s), func(t *testing.T) {
			cmd := exec.Command(filepath.Join(h.root, "bin", "k6"), "inspect", s)
			cmd.Env = h.env()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("k6 inspect: %v\n%s", err, out)
			}
		})
	}
}

func TestStackEndToEnd(t *testing.T) {
	h := newHarness(t)
	out, err := h.proxybench(t, "up")
	t.Cleanup(func() { h.down(t) })
	if err != nil {
		t.Fatalf("proxybench up: %v\n%s", err, out)
	}
	t.Log(out)

	h.loadServed(t)
	h.checkListeners(t)
	if slices.Contains(h.cfg.Names(), "godoxy") {
		switch {
		case h.missing["godoxy"] == "":
			t.Run("godoxy", h.checkGoDoxy)
		case os.Getenv("GODOXY_BIN") != "":
			// make test gives it whenever a binary is at hand: GoDoxy must then be measured
			t.Errorf("GODOXY_BIN=%s is set, but godoxy is not up: %s", os.Getenv("GODOXY_BIN"), h.missing["godoxy"])
		}
	}
	// Every run below streams into a real InfluxDB, and each throughput cell reconciles with it.
	h.streamToInfluxDB(t)
	out, err = h.proxybench(t, "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if strings.Contains(out, "FAIL") {
		t.Errorf("status shows a failing probe:\n%s", out)
	}
	for _, n := range h.cfg.Names() {
		// h3 is said either way: "h3 ok" where the target serves it, "no h3" where it doesn't.
		want := "no h3"
		switch {
		case h.missing[n] != "":
			want = stack.Label(h.missing[n])
		case h.serves(n, "h3"):
			want = "h3 ok"
		}
		if !statusLine(out, n, want) {
			t.Errorf("status does not show %s with %q:\n%s", n, want, out)
		}
	}

	t.Run("fresh connections counted by the server", func(t *testing.T) {
		for _, tc := range []struct{ scenario, counter string }{{"fresh-h1", "tls"}, {"fresh-h3", "h3"}} {
			t.Run(tc.scenario, func(t *testing.T) { h.checkFreshOnServer(t, tc.scenario, tc.counter) })
		}
	})

	for _, sc := range append(names(runner.Throughput), names(runner.Probes)...) {
		t.Run(sc, func(t *testing.T) {
			testid := "e2e-" + sc
			out, err := h.proxybench(t, "k6", "-scenario", sc, "-targets", "all", "-testid", testid)
			if err != nil {
				t.Errorf("proxybench k6 %s: %v\n%s", sc, err, out)
			}
			files, _ := filepath.Glob(filepath.Join(h.results, testid, "*.json"))
			want := len(h.cfg.Names()) * max(1, len(runner.ProbeProtos(sc)))
			if len(files) != want {
				t.Fatalf("%d result files, want %d (one per target and protocol)\n%s", len(files), want, out)
			}
			var measured []*result.Result
			defer func() {
				if !runner.IsProbe(sc) {
					h.checkInfluxDB(t, testid, sc, measured)
				}
			}()
			for _, f := range files {
				r, err := result.LoadResult(f)
				if err != nil {
					t.Fatal(err)
				}
				need := runner.Job{Scenario: sc, Proto: r.Proto}.Requires()
				if h.missing[r.Target] != "" {
					// A target that is not up is a row saying why: an optional one not installed,
					// with how to add it; one whose install failed (a registry moved), with why.
					label := stack.Label(h.missing[r.Target])
					if r.Skipped != label || r.SkipReason != h.missing[r.Target] || !statusLine(out, r.Target, label) {
						t.Errorf("%s/%s: want a %q row saying %q, got %q (%s)\n%s", sc, r.Target, label, h.missing[r.Target], r.Skipped, r.SkipReason, out)
					}
					continue
				}
				if r.Skipped != "" || !h.serves(r.Target, need) {
					h.checkSkipped(t, sc, need, r, out)
					continue
				}
				checkResult(t, sc, r)
				measured = append(measured, r)
				if need == "h3" {
					checkH3Timings(t, sc, r, f)
				}
			}
		})
	}
}

// checkResult asserts what makes a cell valid, independently of the script's own verdict.
func checkResult(t *testing.T, scenario string, r *result.Result) {
	t.Helper()
	cell := fmt.Sprintf("%s/%s/%s", scenario, r.Target, r.Proto)
	if !r.Valid || len(r.Invalid) > 0 {
		t.Errorf("%s: invalid: %v", cell, r.Invalid)
	}
	if r.Checks.Fails != 0 || r.Checks.Passes == 0 {
		t.Errorf("%s: checks passed %v, failed %v", cell, r.Checks.Passes, r.Checks.Fails)
	}
	if r.FailedRequests != 0 || r.DroppedIterations != 0 {
		t.Errorf("%s: %v failed requests, %v dropped iterations", cell, r.FailedRequests, r.DroppedIterations)
	}
	if scenario != "ws" {
		if r.Requests <= 0 {
			t.Errorf("%s: no requests measured", cell)
		}
		if len(r.ProtosSeen) != 1 || r.ProtosSeen[r.ExpectedProto] != r.Requests {
			t.Errorf("%s: protocols seen %v, want all %v requests over %s", cell, r.ProtosSeen, r.Requests, r.ExpectedProto)
		}
		want := "HTTP/1.1"
		switch {
		case strings.HasSuffix(scenario, "-h2") || r.Proto == "h2":
			want = "HTTP/2.0"
		case strings.HasSuffix(scenario, "-h3") || r.Proto == "h3":
			want = "HTTP/3.0"
		}
		if r.ExpectedProto != want {
			t.Errorf("%s: expected_proto %s, want %s", cell, r.ExpectedProto, want)
		}
	}
	if strings.HasPrefix(scenario, "fresh-") {
		if r.Requests < freshRequests || r.NewConnections == nil || *r.NewConnections != r.Requests {
			t.Errorf("%s: %v requests, new connections %v: want %d at least, each on a new connection", cell, r.Requests, r.NewConnections, freshRequests)
		}
		if r.Client != runner.ClientNative && r.Requests != freshRequests {
			t.Errorf("%s: %s sent %v requests, want REQUESTS (%d) exactly", cell, r.Client, r.Requests, freshRequests)
		}
		// the floor runs from the scenario's start, a few ms before the first request's
		if r.Client == runner.ClientNative && r.DurationS < freshFloor.Seconds()*0.9 {
			t.Errorf("%s: a window of %.3f s, want FRESH_DURATION's %v", cell, r.DurationS, freshFloor)
		}
	}
	if !runner.IsProbe(scenario) && (r.RPS == nil || *r.RPS <= 0) {
		t.Errorf("%s: rps %v", cell, r.RPS)
	}
	if scenario == "sse" {
		first, ok := r.Extra["sse_first_event"]
		if !ok || first.Max <= 0 {
			t.Fatalf("%s: no sse_first_event in %v", cell, r.Extra)
		}
		// Three events 150 ms apart: the first must come long before the last (300 ms in), in
		// most responses (one alone late is what a busy machine makes too: scenarios/lib/probes.js)
		if first.P50 > 150 {
			t.Errorf("%s: first SSE event after %.1f ms (p50): the stream is buffered", cell, first.P50)
		}
	}
}

// readState reads the state.json of a stack's run directory.
func readState(t *testing.T, runDir string) *stack.State {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(runDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	st := &stack.State{}
	if err := json.Unmarshal(data, st); err != nil {
		t.Fatal(err)
	}
	return st
}

// loadServed reads what each target serves from the stack's state (state.json `protocols`).
func (h *harness) loadServed(t *testing.T) {
	t.Helper()
	st := readState(t, h.run)
	h.served = map[string][]string{}
	h.missing = st.Missing
	for n, r := range st.Targets {
		for _, p := range r.Protocols {
			h.served[n] = append(h.served[n], string(p))
		}
	}
	// The state must say what the definitions say: direct (the upstream) serves h3, and a
	// proxy serves exactly the protocols of its target.json, each verified at start.
	for _, n := range h.cfg.Names() {
		switch why := h.missing[n]; {
		case stack.Label(why) == stack.LabelNotVerified:
			// installed, so ours to make work: a config or a build of ours is wrong
			t.Errorf("target %s: %s", n, why)
			continue
		case why != "":
			// not installed (optional) or its install failed (a registry moved: `make pins`
			// says what): reported, and the other targets are tested
			t.Logf("target %s: %s", n, why)
			continue
		}
		want := []string{"h1", "h1c", "h2", "h3"}
		if n != stack.Direct {
			d, err := stack.LoadDefinition(filepath.Join(h.root, "proxies"), n)
			if err != nil {
				t.Fatal(err)
			}
			want = d.Protocols
		}
		if !slices.Equal(h.served[n], want) {
			t.Errorf("target %s serves %v according to the stack, want %v", n, h.served[n], want)
		}
	}
}

func (h *harness) serves(target, proto string) bool {
	return slices.Contains(h.served[target], proto)
}

// statusLine tells whether `proxybench status` printed a row for target containing want.
func statusLine(out, target, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == target && strings.Contains(line, want) {
			return true
		}
	}
	return false
}

// checkSkipped: a cell whose target does not serve the protocol is a row that says so ("no
// h3"), neither measured nor invalid; and only such cells are skipped.
func (h *harness) checkSkipped(t *testing.T, scenario, need string, r *result.Result, out string) {
	t.Helper()
	cell := fmt.Sprintf("%s/%s/%s", scenario, r.Target, r.Proto)
	if h.serves(r.Target, need) {
		t.Errorf("%s: skipped (%s) but %s serves %s", cell, r.SkipReason, r.Target, need)
		return
	}
	if r.Skipped != "no "+need || r.SkipReason == "" || r.Valid || len(r.Invalid) != 0 || r.Requests != 0 {
		t.Errorf("%s: %s does not serve %s: want a skipped cell \"no %s\", got skipped %q (%s), valid %v, invalid %v, %v requests",
			cell, r.Target, need, need, r.Skipped, r.SkipReason, r.Valid, r.Invalid, r.Requests)
	}
	if !statusLine(out, r.Target, "no "+need) {
		t.Errorf("%s: the table has no \"no %s\" row for %s:\n%s", cell, need, r.Target, out)
	}
}

// checkH3Timings: over HTTP/3 the connection set-up is timed as for h1/h2 (k6/x/proxybench/http3 fires
// the connect and TLS hooks for the QUIC handshake): some request of the run (setup, warm-up
// or measured) timed a connect and a handshake, and in fresh-h3 every measured one did.
func checkH3Timings(t *testing.T, scenario string, r *result.Result, file string) {
	t.Helper()
	cell := fmt.Sprintf("%s/%s/%s", scenario, r.Target, r.Proto)
	k6 := k6Values(t, file)
	for _, m := range []string{"http_req_connecting", "http_req_tls_handshaking"} {
		if v := k6[m]; v["max"] <= 0 {
			t.Errorf("%s: %s never timed (values %v): no QUIC connection set-up was measured", cell, m, v)
		}
	}
	if strings.HasPrefix(scenario, "fresh-") {
		for _, m := range []string{"http_req_connecting", "http_req_tls_handshaking"} {
			if s, ok := r.Extra[m]; !ok || s.Min <= 0 {
				t.Errorf("%s: %s of the measured requests %+v: every fresh request must time its own", cell, m, s)
			}
		}
	}
}

// k6Values are the values of every metric in the k6 summary data a result file carries (not
// rounded), by metric or submetric name.
func k6Values(t *testing.T, file string) map[string]map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		K6 struct {
			Metrics map[string]struct {
				Values map[string]float64 `json:"values"`
			} `json:"metrics"`
		} `json:"k6"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	values := make(map[string]map[string]float64, len(doc.K6.Metrics))
	for name, m := range doc.K6.Metrics {
		values[name] = m.Values
	}
	return values
}

// checkFreshOnServer proves "fresh" from the other side: against direct, the upstream accepts
// one connection per request (plus the script's setup probe) on the counter of the protocol
// (tls: TCP connections of h1 and h2; h3: QUIC connections).
func (h *harness) checkFreshOnServer(t *testing.T, scenario, counter string) {
	before := h.conns(t)
	testid := "e2e-server-" + scenario
	out, err := h.proxybench(t, "k6", "-scenario", scenario, "-targets", stack.Direct, "-testid", testid)
	if err != nil {
		t.Fatalf("%s on direct: %v\n%s", scenario, err, out)
	}
	after := h.conns(t)
	got := after[counter] - before[counter]
	if counter == "tls" {
		got-- // conns itself opens one TLS connection per call
	}
	r := loadResult(t, filepath.Join(h.results, testid, scenario+"-"+stack.Direct+".json"))
	if n := int(r.Requests); n < freshRequests || got < n || got > n+2 {
		t.Errorf("upstream accepted %d %s connections for %d fresh requests (before %v, after %v)", got, counter, n, before, after)
	}
}

// conns reads the upstream's /debug/conns over TLS: connections accepted per listener.
func (h *harness) conns(t *testing.T) map[string]int {
	t.Helper()
	p := h.cfg.Targets[stack.Direct]
	caPEM, err := os.ReadFile(stack.CertsIn(filepath.Join(h.run, "certs")).CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	addr := net.JoinHostPort(h.cfg.Address, strconv.Itoa(p.TLS))
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: h.cfg.Hostname},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	url := fmt.Sprintf("https://%s:%d/debug/conns", h.cfg.Hostname, p.TLS)
	res, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	var c map[string]int
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return c
}

// downAfterBench brings down, when t ends, a stack a bench left up: bench stops its stack
// itself; only a failed run may leave one behind.
func (h *harness) downAfterBench(t *testing.T) {
	t.Cleanup(func() {
		if data, err := os.ReadFile(filepath.Join(h.run, "state.json")); err == nil {
			var st stack.State
			if json.Unmarshal(data, &st) == nil && len(st.Targets) > 0 {
				_, _ = h.proxybench(t, "down")
			}
		}
	})
}

// down stops the stack and proves nothing it started is left: no pid alive, every port free.
func (h *harness) down(t *testing.T) {
	data, _ := os.ReadFile(filepath.Join(h.run, "state.json"))
	var st stack.State
	_ = json.Unmarshal(data, &st)
	if out, err := h.proxybench(t, "down"); err != nil {
		t.Errorf("proxybench down: %v\n%s", err, out)
	}
	for n, r := range st.Targets {
		if r.Alive() {
			t.Errorf("target %s: pid %d still alive after down", n, r.PID)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	type check struct {
		port int
		free func(string, int) error
	}
	for _, n := range h.cfg.Names() {
		p := h.cfg.Targets[n]
		var checks []check
		for _, port := range p.TCP() {
			checks = append(checks, check{port.Port, stack.CheckPortFree})
		}
		if h.serves(n, "h3") {
			checks = append(checks, check{p.TLS, stack.CheckUDPPortFree})
		}
		for _, c := range checks {
			for {
				err := c.free(h.cfg.Address, c.port)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("after down: %v", err)
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// TestBenchReport runs `proxybench bench` as `make bench` does, with two runs per throughput
// cell, on a stack of its own (direct and nginx, ports 100 beyond the other tests' so a stack
// they left behind cannot collide), then checks the saved bench and its report: the runs'
// statistics, the resources sampled per run, vs-direct, the equal-load pass, report.md and
// report.html, and that bench brought its stack down.
func TestBenchReport(t *testing.T) {
	skipShort(t)
	if inNamespace(t, "TestBenchReport") {
		return // it ran there, with no egress (noegress_test.go)
	}
	h := harnessAt(t, 100, "nginx")
	const testid = "e2e-bench"
	h.downAfterBench(t)
	h.streamToInfluxDB(t) // as `make bench OBSERVE=1`: k6's points and the runner's resources
	from := time.Now().Add(-time.Minute)
	// -targets nginx: bench adds direct itself, the baseline every target is shown against.
	out, err := h.proxybench(t, "bench", "-targets", "nginx", "-modes", "reused,probe",
		"-protos", "h1c,h2", "-runs", "2", "-restart", "-dashboard", "-calibrate-seconds", "2", "-testid", testid)
	// bench fails when any run is invalid. At these sizes on a shared 2-CPU machine the
	// equal-load pass may drop a few iterations (k6 near its own CPU limit): that run is said
	// invalid, which is right, and is only logged here; every matrix cell must be valid.
	benchErr := err
	dir := filepath.Join(h.results, testid)
	for _, want := range []string{
		"[1/", "ETA", "report: " + filepath.Join(dir, "report.html"), "direct added to the targets",
		"each target restarted before each of its runs", "== Reused-connection throughput  (testid " + testid + ", median over the valid runs)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bench output lacks %q:\n%s", want, out)
		}
	}
	// -restart: nginx serves reused-h1c ×2, reused-h2 ×2, the probes and 2 equal-load runs (h1c, h2), each
	// on a process of its own: one "up" line (a new pid) per run, and one of `up`
	nginxPIDs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^nginx +up +pid (\d+)`).FindAllStringSubmatch(out, -1) {
		nginxPIDs[m[1]] = true
	}
	if len(nginxPIDs) < 1+2*2+len(runner.Probes) {
		t.Errorf("-restart: nginx ran on %d processes, want one per run (at least %d):\n%s", len(nginxPIDs), 1+2*2+len(runner.Probes), out)
	}

	// The stack is down: every port bench used is free again, no pid of its state alive.
	data, _ := os.ReadFile(filepath.Join(h.run, "state.json"))
	var st stack.State
	_ = json.Unmarshal(data, &st)
	for n, r := range st.Targets {
		if r.Alive() {
			t.Errorf("after bench: target %s (pid %d) still alive", n, r.PID)
		}
	}
	for _, n := range h.cfg.Names() {
		p := h.cfg.Targets[n]
		for _, port := range p.TCP() {
			if err := stack.CheckPortFree(h.cfg.Address, port.Port); err != nil {
				t.Errorf("after bench: %v", err)
			}
		}
	}
	if err := stack.CheckUDPPortFree(h.cfg.Address, h.cfg.Targets[stack.Direct].TLS); err != nil {
		t.Errorf("after bench: %v", err)
	}

	if _, err := os.Stat(filepath.Join(dir, report.BenchFile)); err != nil {
		t.Fatalf("bench wrote no %s: %v (bench: %v)\n%s", report.BenchFile, err, benchErr, out)
	}
	b, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.Check(b); err != nil {
		t.Errorf("report.Check: %v", err)
	}
	checkCalibration(t, b, dir)
	h.checkResourcesInInfluxDB(t, testid, b, from)
	h.checkRunRatesInInfluxDB(t, testid, b, from)
	h.checkProbeScenariosInInfluxDB(t, testid, b)
	if benchErr != nil {
		for _, c := range b.Cells {
			if len(c.Invalid) > 0 {
				t.Errorf("proxybench bench: %v: %s %s %s invalid: %v\n%s", benchErr, c.Scenario, c.Proto, c.Target, c.Invalid, out)
			}
		}
		t.Logf("proxybench bench: %v (equal-load only)", benchErr)
	}
	for _, k := range []string{"k6_version", "kernel", "cpu_model", "cpus", "config_hashes", "profile", "pinning", "git_commit", "git_dirty", "proxies", "installed_from"} {
		if v, ok := b.Manifest[k]; !ok || fmt.Sprint(v) == "" {
			t.Errorf("manifest %s missing or empty: %v", k, b.Manifest)
		}
	}
	if px, _ := b.Manifest["proxies"].(map[string]any); px["nginx"] == nil || px["direct"] == nil {
		t.Errorf("manifest proxies lacks a version of nginx or direct: %v", b.Manifest["proxies"])
	}
	find := func(scenario, target string) *report.Cell {
		for i := range b.Cells {
			if c := &b.Cells[i]; c.Scenario == scenario && c.Target == target {
				return c
			}
		}
		t.Fatalf("no cell %s %s in bench.json", scenario, target)
		return nil
	}
	for _, sc := range []string{"reused-h1c", "reused-h2"} {
		for _, target := range []string{stack.Direct, "nginx"} {
			c := find(sc, target)
			if len(c.Runs) != 2 || c.RPS.N != 2 || !c.Valid {
				t.Errorf("%s %s: %d runs, %d valid (rps n), valid=%v: want 2 valid runs (%v)", sc, target, len(c.Runs), c.RPS.N, c.Valid, c.Invalid)
				continue
			}
			if c.RPS.Median <= 0 || c.RPS.Min > c.RPS.Median || c.RPS.Median > c.RPS.Max || c.RPS.CVPct < 0 || (c.RPS.Min != c.RPS.Max && c.RPS.CVPct == 0) {
				t.Errorf("%s %s: req/s summary not filled: %+v", sc, target, c.RPS)
			}
			if c.VsDirect == nil || *c.VsDirect <= 0 {
				t.Errorf("%s %s: no vs_direct", sc, target)
			}
			for i, r := range c.Runs {
				if r.Resources == nil || r.Resources.TargetCPUSeconds <= 0 || r.Resources.RSSPeakMB <= 0 || r.Resources.TargetCPUPerReqMicros <= 0 || r.Resources.ClientCPUSeconds <= 0 {
					t.Errorf("%s %s run %d: resources not sampled: %+v", sc, target, i+1, r.Resources)
				}
			}
			if c.Resources == nil || c.Resources.TargetCPUSeconds <= 0 || c.Resources.RSSPeakMB <= 0 {
				t.Errorf("%s %s: no mean resources: %+v", sc, target, c.Resources)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, sc+"-nginx.run2.json")); err != nil {
			t.Errorf("run 2 of %s nginx: %v", sc, err)
		}
		// -dashboard: each run's k6 web dashboard export, self-contained, linked from its row
		for i, r := range find(sc, "nginx").Runs {
			page, err := os.ReadFile(filepath.Join(dir, r.Dashboard))
			if r.Dashboard == "" || err != nil || !bytes.Contains(page, []byte("<html")) {
				t.Errorf("%s nginx run %d: no k6 web dashboard export (%q: %v)", sc, i+1, r.Dashboard, err)
			}
		}
	}
	// The equal-load pass: over h1c and h2 (h1 and h3 are not among -protos), both targets at
	// one rate per protocol, each run twice as the matrix is (RUNS=2). Both run the native open
	// model, which drops nothing: a queue shows as requests behind schedule ("could not
	// sustain", a result), never as fewer requests or a reason to be invalid.
	rates := map[string][]float64{}
	for _, e := range b.EqualLoad {
		if (e.Proto != "h1c" && e.Proto != "h2") || e.RateRPS <= 0 || e.Requests <= 0 || e.P999 <= 0 || e.P999 < e.P99 ||
			e.Valid != (len(e.Invalid) == 0) || e.Dropped != 0 || e.Run < 1 || e.Run > 2 {
			t.Errorf("equal-load cell not as it should be: %+v", e)
		}
		if !e.Valid {
			t.Logf("equal-load %s %s at %.0f req/s invalid: %v", e.Proto, e.Target, e.RateRPS, e.Invalid)
		}
		rates[e.Proto] = append(rates[e.Proto], e.RateRPS)
	}
	for _, p := range []string{"h1c", "h2"} {
		if r := rates[p]; len(r) != 4 || slices.Min(r) != slices.Max(r) {
			t.Errorf("equal-load %s: cells at %v req/s, want direct and nginx twice each at one rate", p, r)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Error(err)
	}
	// Two runs per cell: the spread table has every statistic of each.
	for _, c := range b.Cells {
		if c.RPS.N == 2 {
			row := fmt.Sprintf("| %s | %s | 2 |", c.Scenario, c.Target)
			if !strings.Contains(string(md), row) {
				t.Errorf("report.md: no spread row %q", row)
			}
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("report.html missing or without a chart (%v)", err)
	}
}

// checkCalibration: the bench measured the client's ceiling first, k6 against each native
// peer on direct for every protocol of the bench that has one, and the report says it.
func checkCalibration(t *testing.T, b *report.Bench, dir string) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range b.Calibration {
		key := c.Client + " " + c.Proto
		seen[key] = true
		switch {
		case c.Err != "":
			t.Errorf("calibration %s: %s", key, c.Err)
		case c.Target != stack.Direct || c.Requests <= 0 || c.ClientCPUMicros <= 0 || c.TargetCPUMicros <= 0:
			t.Errorf("calibration %s: %+v, want figures against direct", key, *c)
		case c.IsK6() && c.VsPeer <= 0:
			t.Errorf("calibration %s: no vs peer", key)
		}
	}
	// the bench's cells ran on the native loop (CLIENT unset): its ceiling is the one calibrated
	for _, want := range []string{"k6-native h1c", "wrk h1c", "h2load h1c", "k6-native h2", "h2load h2"} {
		if !seen[want] {
			t.Errorf("bench.json calibration has no %s run: %v", want, seen)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## The client's ceiling", "Client: reused cells ran on our native loop (k6/x/proxybench/load) (h1c, h2)", "; it makes "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md does not say %q", want)
		}
	}
}

// names are the catalogue entries' names.
func names(entries []scenarios.Scenario) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name
	}
	return out
}

// checkResultFiles validates every result file under dir against scenarios/result.schema.json:
// the scripts' output (summary.js), a split run's instances and merge, the runner's additions
// and the cells it wrote itself. A JSON object with neither schema nor scenario is no result,
// and soak.json is the soak's own report (soak/report.go), which names its k6 result file.
func checkResultFiles(t *testing.T, dir string) {
	t.Helper()
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") && d.Name() != "soak.json" {
			files = append(files, p)
		}
		return nil // a folder the test removed: nothing to check there
	})
	n := 0
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			continue
		}
		var head map[string]json.RawMessage
		if json.Unmarshal(data, &head) != nil || head["schema"] == nil || head["scenario"] == nil {
			continue
		}
		n++
		if err := result.Validate(data); err != nil {
			t.Errorf("%s does not follow scenarios/result.schema.json: %v", p, err)
		}
	}
	if testing.Verbose() && n > 0 {
		t.Logf("%d result files held to scenarios/result.schema.json", n)
	}
}
