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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// portOffset moves every port of targets.json so the test stack never collides with one a
// user has up.
const portOffset = 20000

// Tiny sizes: enough requests to be meaningful, small enough for a 2-core CI machine.
var tinyEnv = []string{
	"DURATION=2s", "WARMUP=1s", "CONNECTIONS=4", "STREAMS=4",
	"REQUESTS=120", "FRESH_CONNECTIONS=4", "SAMPLES=2",
}

const freshRequests = 120

type harness struct {
	root, run, results, targets string
	cfg                         *stack.Config
}

func newHarness(t *testing.T) *harness {
	t.Helper()
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
	cfg, err := stack.LoadConfig(filepath.Join(root, "targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstream.H1C += portOffset
	for n, p := range cfg.Targets {
		cfg.Targets[n] = stack.Ports{TLS: p.TLS + portOffset, H1C: p.H1C + portOffset}
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(h.targets, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h.cfg = cfg
	return h
}

func (h *harness) env(extra ...string) []string {
	env := append(os.Environ(),
		"TARGETS_FILE="+h.targets, "PROXYBENCH_RUN="+h.run, "RESULTS_DIR="+h.results,
		"K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false")
	env = append(env, tinyEnv...)
	return append(env, extra...)
}

// proxybench runs the real CLI, as `make` does.
func (h *harness) proxybench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), args...)
	cmd.Dir = h.root
	cmd.Env = h.env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func TestScenariosPassInspect(t *testing.T) {
	h := newHarness(t)
	scripts, _ := filepath.Glob(filepath.Join(h.root, "scenarios", "*.js"))
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

	out, err = h.proxybench(t, "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for _, n := range h.cfg.Names() {
		if !strings.Contains(out, n) || strings.Contains(out, "FAIL") {
			t.Errorf("status does not show %s healthy:\n%s", n, out)
		}
	}

	t.Run("fresh connections counted by the server", func(t *testing.T) { h.checkFreshOnServer(t) })

	for _, sc := range append(append([]string{}, runner.Throughput...), probeNames()...) {
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
			for _, f := range files {
				r, err := runner.LoadResult(f)
				if err != nil {
					t.Fatal(err)
				}
				checkResult(t, sc, r)
			}
		})
	}
}

func probeNames() []string {
	var names []string
	for _, p := range runner.Probes {
		names = append(names, p.Scenario)
	}
	return names
}

// checkResult asserts what makes a cell valid, independently of the script's own verdict.
func checkResult(t *testing.T, scenario string, r *runner.Result) {
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
		if strings.HasSuffix(scenario, "-h2") || r.Proto == "h2" {
			want = "HTTP/2.0"
		}
		if r.ExpectedProto != want {
			t.Errorf("%s: expected_proto %s, want %s", cell, r.ExpectedProto, want)
		}
	}
	if strings.HasPrefix(scenario, "fresh-") {
		if r.Requests != freshRequests || r.NewConnections == nil || *r.NewConnections != r.Requests {
			t.Errorf("%s: %v requests, new connections %v: want %d, each on a new connection", cell, r.Requests, r.NewConnections, freshRequests)
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
		// Three events 150 ms apart: the first must come long before the last (300 ms in).
		if first.Max > 150 {
			t.Errorf("%s: first SSE event after %.1f ms: the stream is buffered", cell, first.Max)
		}
	}
}

// checkFreshOnServer proves "fresh" from the other side: against direct over TLS, the upstream
// accepts one connection per request (plus the script's setup probe).
func (h *harness) checkFreshOnServer(t *testing.T) {
	before := h.conns(t)
	testid := "e2e-fresh-server"
	out, err := h.proxybench(t, "k6", "-scenario", "fresh-h1", "-targets", stack.Direct, "-testid", testid)
	if err != nil {
		t.Fatalf("fresh-h1 on direct: %v\n%s", err, out)
	}
	after := h.conns(t)
	// conns itself opens one TLS connection per call.
	got := after - before - 1
	if got < freshRequests || got > freshRequests+2 {
		t.Errorf("upstream accepted %d TLS connections for %d fresh requests", got, freshRequests)
	}
}

func (h *harness) conns(t *testing.T) int {
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
	var c struct {
		TLS int `json:"tls"`
	}
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return c.TLS
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
	for _, n := range h.cfg.Names() {
		p := h.cfg.Targets[n]
		for _, port := range []int{p.TLS, p.H1C} {
			for {
				err := stack.CheckPortFree(h.cfg.Address, port)
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
