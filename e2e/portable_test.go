package e2e

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// k6Env is what every k6 of these tests runs with, and nothing of the caller's scenario knobs.
func k6Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains([]string{"TARGET", "TARGET_URL", "TARGETS_FILE", "PROTO", "TESTID", "SUMMARY_JSON"}, k) {
			env = append(env, kv)
		}
	}
	return append(append(env, "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false"), extra...)
}

// whichK6File holds the table of which k6 runs each script.
const whichK6File = "cmd/proxybench/README.md"

// scriptNeeds reads cmd/proxybench/README.md's "Which k6 runs what": scenario (native/… for the native loop) →
// the extension it always needs, "" for any k6.
func scriptNeeds(t *testing.T, root string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, whichK6File))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "### Which k6 runs what\n")
	if !ok {
		t.Fatalf(`%s has no "### Which k6 runs what"`, whichK6File)
	}
	sec, _, _ = strings.Cut(sec, "\n### ")
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9/-]+)` \\| (.+) \\|$")
	ext := regexp.MustCompile("^bin/k6 \\(`(k6/x/[a-z0-9/]+)`\\)$")
	needs := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(sec, -1) {
		switch e := ext.FindStringSubmatch(m[2]); {
		case e != nil:
			needs[m[1]] = e[1]
		case strings.HasPrefix(m[2], "any k6"):
			needs[m[1]] = ""
		default:
			t.Fatalf("%s: %s runs on %q: want `any k6…` or `bin/k6 (`k6/x/…`)`", whichK6File, m[1], m[2])
		}
	}
	return needs
}

// scripts lists every scenario script by its README name: reused-h2, native/reused-h2, ….
func scripts(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pattern := range []string{"*.js", "native/*.js"} {
		files, _ := filepath.Glob(filepath.Join(root, "scenarios", pattern))
		for _, f := range files {
			rel, _ := filepath.Rel(filepath.Join(root, "scenarios"), f)
			out[strings.TrimSuffix(rel, ".js")] = f
		}
	}
	if len(out) < len(runner.Throughput)+len(runner.Probes) {
		t.Fatalf("found %d scenario scripts, want at least %d", len(out), len(runner.Throughput)+len(runner.Probes))
	}
	return out
}

// deps is what `k6 deps --json` says a script needs beyond k6: the k6/x/ modules.
func deps(t *testing.T, k6, script string) []string {
	t.Helper()
	cmd := exec.Command(k6, "deps", "--json", script)
	cmd.Env = k6Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("k6 deps %s: %v", script, err)
	}
	var d struct {
		BuildDependencies map[string]string `json:"buildDependencies"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("k6 deps %s: %v\n%s", script, err, out)
	}
	var ours []string
	for k := range d.BuildDependencies {
		if strings.HasPrefix(k, "k6/x/") {
			ours = append(ours, k)
		}
	}
	slices.Sort(ours)
	return ours
}

// stockK6 builds k6 as Grafana releases it, from the same module as bin/k6 but without our
// extensions: what a user without this repository runs.
func stockK6(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "k6")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "go.k6.io/k6/v2")
	cmd.Dir = filepath.Join(root, "extensions")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building a stock k6 from extensions/go.mod's k6: %v\n%s", err, out)
	}
	return bin
}

// remote is the PROTO (for probes and equal-load) and a base URL of the scheme the script's
// protocol needs, for archives only: no request is sent.
func remote(name string) (proto, url string) {
	switch {
	case name == "ws":
		proto = "h1c"
	case runner.IsProbe(name) || name == "equal-load":
		proto = "h2"
	}
	if proto == "h1c" || strings.HasSuffix(name, "-h1c") {
		return proto, "http://proxy.example:8081"
	}
	return proto, "https://proxy.example:8443"
}

// The table of which k6 runs what is what k6 deps says; every script that needs one of our extensions says
// so to a stock k6 before any load, and every other one runs on a stock k6: it archives with a
// remote TARGET_URL, the archive holds no file of this clone but the scripts, and it passes
// `k6 inspect --execution-requirements` in another directory (what k6 cloud does with it).
func TestPortableScenarios(t *testing.T) {
	h := newHarness(t)
	k6 := filepath.Join(h.root, "bin", "k6")
	stock := stockK6(t, h.root)
	needs := scriptNeeds(t, h.root)
	all := scripts(t, h.root)
	for name := range all {
		if _, ok := needs[name]; !ok {
			t.Errorf("%s's \"Which k6 runs what\" has no row for %s", whichK6File, name)
		}
	}
	for name, want := range needs {
		script, ok := all[name]
		if !ok {
			t.Errorf("%s's \"Which k6 runs what\" names %s, which is no script", whichK6File, name)
			continue
		}
		t.Run(strings.ReplaceAll(name, "/", "-"), func(t *testing.T) {
			got := deps(t, k6, script)
			if want == "" && len(got) > 0 || want != "" && !slices.Equal(got, []string{want}) {
				t.Fatalf("k6 deps says %s needs %v; %s says %q", name, got, whichK6File, want)
			}
			if want != "" {
				_, url := remote(name)
				inspect := exec.Command(stock, "inspect", "-e", "TARGET_URL="+url, script)
				inspect.Env = k6Env()
				out, err := inspect.CombinedOutput()
				if err == nil || !strings.Contains(string(out), want+" is one of proxybench's own k6 extensions") || !strings.Contains(string(out), "bin/k6") {
					t.Fatalf("a stock k6 on %s: want it stopped, saying to run bin/k6; got %v\n%s", name, err, out)
				}
				return
			}
			archive := filepath.Join(t.TempDir(), "test.tar")
			proto, url := remote(name)
			env := []string{"-e", "TARGET_URL=" + url, "-e", "TARGET=edge"}
			if proto != "" {
				env = append(env, "-e", "PROTO="+proto)
			}
			if name == "equal-load" {
				env = append(env, "-e", "RATE=100")
			}
			cmd := exec.Command(stock, append(append([]string{"archive", "-O", archive}, env...), script)...)
			cmd.Env = k6Env()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("a stock k6 archives %s: %v\n%s", name, err, out)
			}
			for _, f := range archivedFiles(t, archive) {
				if !strings.Contains(f, "/scenarios/") {
					t.Errorf("the archive of %s holds %s: a remote run must read no file of this clone but its scripts", name, f)
				}
			}
			elsewhere := t.TempDir()
			cmd = exec.Command(stock, "inspect", "--execution-requirements", archive)
			cmd.Dir = elsewhere
			cmd.Env = append(k6Env(), "PWD="+elsewhere)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("k6 inspect --execution-requirements of the archive, from another directory: %v\n%s", err, out)
			}
			var plan struct {
				MaxVUs int `json:"maxVUs"`
			}
			if err := json.Unmarshal(out[bytes.IndexByte(out, '{'):], &plan); err != nil || plan.MaxVUs < 1 {
				t.Fatalf("k6 inspect --execution-requirements: want maxVUs ≥ 1, got %v\n%s", err, out)
			}
		})
	}
}

// archivedFiles lists the files a k6 archive carries (its file/ tree).
func archivedFiles(t *testing.T, archive string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var files []string
	r := tar.NewReader(f)
	for {
		hdr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if hdr.Typeflag == tar.TypeReg && strings.HasPrefix(hdr.Name, "file/") {
			files = append(files, strings.TrimPrefix(hdr.Name, "file"))
		}
	}
}

// A portable scenario reaches a target by TARGET_URL alone: the upstream listens on 127.0.0.2
// only, where the `hosts` mapping of targets.json (127.0.0.1) would never send it, and the runs
// are valid, counted by the upstream itself.
func TestRemoteTarget(t *testing.T) {
	h := newHarness(t)
	addr := startUpstreamOn(t, h, "127.0.0.2")
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
		c.Close()
		t.Skipf("something listens on 127.0.0.1:%d too: the test could not tell the two addresses apart", port)
	}

	url := "http://" + addr
	tests := []struct {
		scenario string
		env      []string
		check    func(t *testing.T, r *result.Result)
	}{
		{"reused-h1c", []string{"DURATION=2s", "WARMUP=1s", "CONNECTIONS=2"}, func(t *testing.T, r *result.Result) {
			if r.RPS == nil || *r.RPS <= 0 {
				t.Errorf("rps %v, want a positive figure", r.RPS)
			}
		}},
		{"fresh-h1c", []string{"REQUESTS=60", "FRESH_CONNECTIONS=4"}, func(t *testing.T, r *result.Result) {
			if r.Requests != 60 {
				t.Errorf("%v requests, want 60", r.Requests)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			before := upstreamAccepted(t, url)
			summary := filepath.Join(t.TempDir(), "result.json")
			cmd := exec.Command(filepath.Join(h.root, "bin", "k6"), "run", "-q", filepath.Join(h.root, "scenarios", tt.scenario+".js"))
			cmd.Dir = t.TempDir()
			cmd.Env = k6Env(append([]string{"TARGET_URL=" + url, "TARGET=far", "SUMMARY_JSON=" + summary}, tt.env...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("k6 run %s against %s: %v\n%s", tt.scenario, url, err, out)
			}
			r, err := result.LoadResult(summary)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Valid || r.Target != "far" {
				t.Fatalf("result: valid %v (%v), target %q; want valid, target far", r.Valid, r.Invalid, r.Target)
			}
			var doc struct {
				Config struct {
					Origin string `json:"target_origin"`
				} `json:"config"`
			}
			raw, _ := os.ReadFile(summary)
			_ = json.Unmarshal(raw, &doc)
			if doc.Config.Origin != url {
				t.Errorf("config.target_origin %q, want %q", doc.Config.Origin, url)
			}
			if got := upstreamAccepted(t, url) - before; got < 2 {
				t.Errorf("the upstream on %s accepted %d connections during the run", addr, got)
			}
			tt.check(t, r)
		})
	}
}

func freePort(t *testing.T, host string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s (loopback beyond 127.0.0.1 not routed here?): %v", host, err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitHTTP(t *testing.T, url string, log fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not answer within 10s\n%s", url, log)
}

// upstreamAccepted is the upstream's count of accepted cleartext connections (/debug/conns).
func upstreamAccepted(t *testing.T, origin string) int {
	t.Helper()
	res, err := http.Get(origin + "/debug/conns")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var c map[string]int
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatalf("/debug/conns: %v", err)
	}
	return c["h1c"]
}

// cloudStandIn stands in for k6 cloud's API, which cannot be reached from here: it answers
// every request with 200 and records it.
type cloudStandIn struct {
	url  string
	mu   sync.Mutex
	seen []string // "METHOD /path bytes"
}

func newCloudStandIn(t *testing.T) *cloudStandIn {
	t.Helper()
	c := &cloudStandIn{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		c.mu.Lock()
		c.seen = append(c.seen, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, n))
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func (c *cloudStandIn) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

// env points every k6 cloud endpoint at the stand-in.
func (c *cloudStandIn) env() []string {
	return []string{"K6_CLOUD_HOST=" + c.url, "K6_CLOUD_HOST_V6=" + c.url}
}

// Without a token and a stack, make k6-cloud stops at once in both modes, says how to log in,
// and nothing reaches the cloud's API; the modes' refusals come before any network call too.
func TestCloudRefusals(t *testing.T) {
	h := newHarness(t)
	api := newCloudStandIn(t)
	home := t.TempDir()
	noLogin := append(api.env(), "HOME="+home, "XDG_CONFIG_HOME=", "K6_CONFIG=", "K6_CLOUD_TOKEN=", "K6_CLOUD_STACK_ID=")
	fake := append(api.env(), "K6_CLOUD_TOKEN=stand-in", "K6_CLOUD_STACK_ID=1")
	tests := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"local, not logged in", []string{"-scenario", "reused-h1c", "-targets", "direct"}, noLogin, "k6 cloud login"},
		{"cloud, not logged in", []string{"-scenario", "reused-h2", "-mode", "cloud", "-target-url", "https://proxy.example:8443"}, noLogin, "k6 cloud login"},
		{"cloud, h3", []string{"-scenario", "reused-h3", "-mode", "cloud", "-target-url", "https://proxy.example:8443"}, fake, "k6/x/proxybench/http3"},
		{"cloud, our extension", []string{"-scenario", "stream", "-proto", "h2", "-mode", "cloud", "-target-url", "https://proxy.example:8443"}, fake, "needs k6/x/proxybench/sse"},
		{"cloud, h1 over TLS", []string{"-scenario", "fresh-h1", "-mode", "cloud", "-target-url", "https://proxy.example:8443"}, fake, "GODEBUG=http2client=0"},
		{"cloud without TARGET_URL", []string{"-scenario", "fresh-h2", "-mode", "cloud"}, fake, "MODE=cloud needs TARGET_URL"},
		{"unknown mode", []string{"-scenario", "fresh-h2", "-mode", "remote"}, fake, `MODE="remote"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), append([]string{"k6-cloud"}, tt.args...)...)
			cmd.Dir = h.root
			cmd.Env = append(h.env(), tt.env...)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tt.want) {
				t.Fatalf("want a failure saying %q, got %v\n%s", tt.want, err, out)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v to refuse", took)
			}
			if seen := api.requests(); len(seen) > 0 {
				t.Fatalf("the cloud API was called: %v", seen)
			}
		})
	}
}

// MODE=local is `bin/k6 cloud run --local-execution` against the local stack: the run streams
// its metrics to k6 cloud and writes the result JSON as make k6 does. The cloud's API is a
// stand-in, given to k6 as an externally provisioned run (K6_CLOUD_PUSH_REF_ID, as the
// k6-operator hands runs to k6), so k6 skips the provisioning calls and only pushes metrics.
func TestCloudLocalExecution(t *testing.T) {
	h := harnessAt(t, 2200, stack.Direct)
	if out, err := h.proxybench(t, "up"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	defer h.down(t)
	api := newCloudStandIn(t)
	cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), "k6-cloud", "-scenario", "reused-h1c", "-targets", "direct", "-testid", "cloud-local")
	cmd.Dir = h.root
	cmd.Env = append(h.env(), append(api.env(),
		"K6_CLOUD_TOKEN=stand-in", "K6_CLOUD_STACK_ID=1", "K6_CLOUD_PUSH_REF_ID=4242",
		"K6_CLOUD_METRICS_PUSH_URL="+api.url+"/metrics", "K6_CLOUD_TEST_RUN_TOKEN=stand-in")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make k6-cloud MODE=local: %v\n%s", err, out)
	}
	r, err := result.LoadResult(filepath.Join(h.results, "cloud-local", "reused-h1c-direct.json"))
	if err != nil {
		t.Fatalf("no result JSON: %v\n%s", err, out)
	}
	if !r.Valid || r.Requests == 0 {
		t.Fatalf("result: valid %v %v, %v requests\n%s", r.Valid, r.Invalid, r.Requests, out)
	}
	var pushed int
	for _, s := range api.requests() {
		if strings.HasPrefix(s, "POST /metrics ") && !strings.HasSuffix(s, " 0") {
			pushed++
		}
	}
	if pushed == 0 {
		t.Fatalf("no metrics pushed to k6 cloud's stand-in; it saw %v\n%s", api.requests(), out)
	}
	t.Logf("k6 cloud's stand-in saw %d metric pushes of %d requests", pushed, len(api.requests()))
}
