package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
)

// The three tests below prove that a target whose figures flatter it is judged invalid, with
// the reason, however it comes by them: a cache that answers without the upstream, a server
// that allows fewer concurrent streams than the plan runs, and a proxy that changes the body.
// Each target is a throwaway folder brought up beside direct with the real CLI; each first
// proves that it does lie (seen from outside the client under test), then runs the cell on it
// and on direct (and on the real proxy the variant copies, where cheap), which stays valid.

// TestLieCache: nginx with a response cache on / answers the native loop's reused-h1c from its
// cache, not from the upstream: its req/s would be a cache's, not a proxy's.
func TestLieCache(t *testing.T) {
	const plain, cached = "nginx-copy", "nginx-cache"
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	h := variantHarness(t, 2450,
		nginxVariant{name: plain},
		nginxVariant{cached, [][2]string{
			// The cache's files are in the run directory, which only its owner may enter (a
			// t.TempDir): nginx started as root would write them as nobody. Workers run as the
			// test's user (a master that is not root ignores the directive, with a warning).
			{"daemon off;", "daemon off;\nuser " + me.Username + ";"},
			// proxy_cache_path is of the http level; the cache's files in the run directory
			{"    upstream upstream_h1c {", "    proxy_cache_path {{.RunDir}}/cache levels=1:2 keys_zone=lies:1m max_size=16m inactive=10m use_temp_path=off;\n\n    upstream upstream_h1c {"},
			inLocation("proxy_cache lies;\n            proxy_cache_valid 200 10m;\n" +
				"            proxy_ignore_headers Cache-Control Expires Set-Cookie;\n" +
				// how the test tells a hit; in the location itself, as addtarget_test.go says
				"            add_header X-Cache-Status $upstream_cache_status always;"),
			// nginx caches nothing it does not buffer (ngx_http_upstream_send_response frees the
			// cache entry of an unbuffered response): proxies/nginx's own setting is off
			{"proxy_buffering off;", "proxy_buffering on;"},
		}},
	)
	h.upAll(t, plain, cached)

	t.Run("the target does lie", func(t *testing.T) {
		const gets = 50
		// the plain copy, for contrast: the upstream answers each of its requests
		before := h.servedRoot(t)
		h.getRoot(t, plain, gets)
		if n := h.servedRoot(t) - before; n != gets {
			t.Errorf("%d GETs of / through %s: the upstream answered %d, want %d", gets, plain, n, gets)
		}
		before = h.servedRoot(t)
		hits := h.getRoot(t, cached, gets)["HIT"]
		n := h.servedRoot(t) - before
		if hits < gets-1 {
			t.Errorf("%d GETs of / through %s: %d were cache hits (X-Cache-Status), want at least %d", gets, cached, hits, gets-1)
		}
		if n > 1 {
			t.Errorf("%d GETs of / through %s: the upstream answered %d, want at most 1 (a cache)", gets, cached, n)
		}
		t.Logf("%d GETs of / through %s: %d cache hits, the upstream answered %d", gets, cached, hits, n)
	})

	const scenario, want = "reused-h1c", "without the upstream (a cache?)"
	h.runValid(t, scenario, stack.Direct, "e2e-lie-cache-direct")
	h.runValid(t, scenario, plain, "e2e-lie-cache-plain")
	h.runInvalid(t, scenario, cached, "e2e-lie-cache", want)
}

// TestLieStreamCap: nginx that allows one concurrent stream per HTTP/2 connection cannot carry
// the plan's STREAMS on each connection: its reused-h2 figures are of another load.
func TestLieStreamCap(t *testing.T) {
	const plain, capped, streams = "nginx-copy", "nginx-1stream", 4
	if !slices.Contains(tinyEnv, "STREAMS="+strconv.Itoa(streams)) {
		t.Fatalf("tinyEnv %v: the test expects STREAMS=%d", tinyEnv, streams)
	}
	h := variantHarness(t, 2550,
		nginxVariant{name: plain},
		// at the TLS server's level, under the http level's 250
		nginxVariant{capped, [][2]string{{"        http2 on;\n", "        http2 on;\n        http2_max_concurrent_streams 1;\n"}}},
	)
	h.upAll(t, plain, capped)

	t.Run("the target does lie", func(t *testing.T) {
		for target, want := range map[string]int{plain: 250, capped: 1} {
			if got := h.offeredH2Streams(t, target); got != want {
				t.Errorf("%s: SETTINGS_MAX_CONCURRENT_STREAMS %d, want %d", target, got, want)
			} else {
				t.Logf("%s: SETTINGS_MAX_CONCURRENT_STREAMS %d", target, got)
			}
		}
	})

	const scenario = "reused-h2"
	want := fmt.Sprintf("the target allows 1 concurrent stream per connection; the plan needs %d", streams)
	h.runValid(t, scenario, stack.Direct, "e2e-lie-streams-direct")
	h.runValid(t, scenario, plain, "e2e-lie-streams-plain")
	h.runInvalid(t, scenario, capped, "e2e-lie-streams", want)
}

// TestLieBodyRewrite: a proxy that changes one byte of each body of /, same length and
// Content-Length, passes every size check: only the bytes tell. It is a small Go reverse proxy
// (testdata/liar) added as a folder of its own: target.json, a config template, install.sh.
func TestLieBodyRewrite(t *testing.T) {
	const liar, at = "liar", 6
	h := harnessAt(t, 2650, stack.Direct)
	h.addLiars(t, liarTarget{liar, "one byte of every body of / changed, same length", fmt.Sprintf("-rewrite-at %d", at)})
	h.upAll(t, liar)
	if got := readState(t, h.run).Targets[liar]; got == nil || !slices.Equal(got.Protocols, []stack.Protocol{stack.H1C}) {
		t.Fatalf("state: %s is %+v, want up serving h1c only", liar, got)
	}

	t.Run("the target does lie", func(t *testing.T) {
		want := h.body(t, stack.Direct)
		got := h.body(t, liar)
		if len(want) != stack.RootBodyBytes || len(got) != len(want) {
			t.Fatalf("bodies of /: upstream %d bytes, %s %d bytes, want both %d", len(want), liar, len(got), stack.RootBodyBytes)
		}
		var differ []int
		for i := range want {
			if got[i] != want[i] {
				differ = append(differ, i)
			}
		}
		if !slices.Equal(differ, []int{at}) {
			t.Fatalf("%s's body of / differs from the upstream's at bytes %v, want at %d only", liar, differ, at)
		}
		t.Logf("%s's body of /: %d bytes, Content-Length kept, differs at byte %d only (%q, the upstream's %q)", liar, len(got), at, got[at], want[at])
	})

	const scenario = "reused-h1c"
	want := fmt.Sprintf("body differs from the upstream's at byte %d of %d", at, stack.RootBodyBytes)
	h.runValid(t, scenario, stack.Direct, "e2e-lie-body-direct")
	h.runInvalid(t, scenario, liar, "e2e-lie-body", want)
}

// liarTarget is a throwaway target of e2e/testdata/liar: its name, the lie it tells (said in its
// config) and the flags that make it tell it.
type liarTarget struct {
	name, lie, flags string
}

// addLiars adds the liars to the harness's targets, each a folder of its own (target.json, a
// config template, install.sh), as a proxy of proxies/ is. The liar is built as the test's own;
// its install script copies it into an install cache of the test's own (the user's is not
// touched), as a proxy's puts its binary there.
func (h *harness) addLiars(t *testing.T, liars ...liarTarget) {
	t.Helper()
	built := filepath.Join(t.TempDir(), "proxybench-liar")
	build := exec.Command("go", "build", "-o", built, "./testdata/liar")
	build.Dir = filepath.Join(h.root, "e2e")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/liar: %v\n%s", err, out)
	}
	t.Setenv("PROXYBENCH_CACHE", t.TempDir())
	proxies := t.TempDir()
	var names []string
	for _, l := range liars {
		writeFile(t, filepath.Join(proxies, l.name, "target.json"), `{
  "config": "liar.conf.tmpl",
  "command": ["proxybench-liar", "-config", "{{.ConfigFile}}"],
  "version": ["proxybench-liar", "-version"],
  "install": "install.sh",
  "protocols": ["h1c"]
}
`)
		writeFile(t, filepath.Join(proxies, l.name, "liar.conf.tmpl"), fmt.Sprintf(`# e2e/testdata/liar's flags, one a line: cleartext HTTP/1.1 only, as target.json says
-listen {{.Addr}}:{{.H1CPort}}
-upstream {{.UpstreamAddr}}
-keepalive {{.Keepalive}}
# the lie: %s
%s
`, l.lie, l.flags))
		writeFile(t, filepath.Join(proxies, l.name, "install.sh"), fmt.Sprintf(`#!/usr/bin/env bash
# the liar the test built (e2e/lies_test.go), into the install cache
set -euo pipefail
mkdir -p "$PROXYBENCH_CACHE/bin"
cp '%s' "$PROXYBENCH_CACHE/bin/proxybench-liar"
`, built))
		names = append(names, l.name)
	}
	t.Setenv("PROXYBENCH_PROXIES", proxies)
	h.addTargets(t, 50, names...)
}

// upAll brings the harness's stack up (h.up) and fails the test unless every one of names is
// up: `up` with every target goes on past one that fails, saying why in the state.
func (h *harness) upAll(t *testing.T, names ...string) {
	t.Helper()
	h.up(t)
	st := readState(t, h.run)
	for _, n := range names {
		if !st.IsUp(n) {
			log, _ := os.ReadFile(filepath.Join(h.run, n, n+".log"))
			t.Fatalf("target %s is not up: %s\nthe end of its log:\n%s", n, st.Missing[n], stack.LastLines(string(log), 10))
		}
	}
}

// runValid runs scenario on target alone with the real CLI and asserts that it exits 0 and its
// cell is valid (checkResult).
func (h *harness) runValid(t *testing.T, scenario, target, testid string) {
	t.Helper()
	out, err := h.proxybench(t, "k6", "-scenario", scenario, "-targets", target, "-testid", testid)
	if err != nil {
		t.Errorf("%s on %s: %v\n%s", scenario, target, err, out)
	}
	r, err := result.LoadResult(filepath.Join(h.results, testid, scenario+"-"+target+".json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkResult(t, scenario, r)
}

// runInvalid runs scenario on target alone with the real CLI and asserts that the command
// fails, its table says the cell is invalid and why, and the result file is invalid with a
// reason containing want.
func (h *harness) runInvalid(t *testing.T, scenario, target, testid, want string) {
	t.Helper()
	out, err := h.proxybench(t, "k6", "-scenario", scenario, "-targets", target, "-testid", testid)
	t.Logf("proxybench k6 -scenario %s -targets %s: %v\n%s", scenario, target, err, out)
	if err == nil {
		t.Errorf("%s on %s exited 0, want a failure: the cell must be invalid", scenario, target)
	}
	if !tableSaysInvalid(out, target, want) {
		t.Errorf("%s on %s: the table (logged above) does not show the cell invalid: want valid NO and a note \"invalid: %s …%s…\"", scenario, target, target, want)
	}
	r, err := result.LoadResult(filepath.Join(h.results, testid, scenario+"-"+target+".json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Valid {
		t.Errorf("%s on %s: valid (%.0f requests, %v req/s), want invalid with %q", scenario, target, r.Requests, rateOf(r), want)
	}
	if !slices.ContainsFunc(r.Invalid, func(s string) bool { return strings.Contains(s, want) }) {
		t.Errorf("%s on %s: invalid %q: no reason containing %q", scenario, target, r.Invalid, want)
	}
}

// tableSaysInvalid tells whether `proxybench k6`'s table printed target's row with "NO" in its
// valid column and a note "invalid: <target> …" containing want.
func tableSaysInvalid(out, target, want string) bool {
	row, note := false, false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] == target && f[len(f)-1] == "NO" {
			row = true
		}
		if strings.HasPrefix(strings.TrimSpace(line), "invalid: "+target+" ") && strings.Contains(line, want) {
			note = true
		}
	}
	return row && note
}

func rateOf(r *result.Result) any {
	if r.RPS == nil {
		return "no"
	}
	return fmt.Sprintf("%.0f", *r.RPS)
}

// targetRequest is a GET of path on target's cleartext port, with the Host clients send.
func (h *harness) targetRequest(t *testing.T, target, path string) *http.Request {
	t.Helper()
	port := h.cfg.Targets[target].H1C
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s:%d%s", h.cfg.Address, port, path), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = fmt.Sprintf("%s:%d", h.cfg.Hostname, port)
	return req
}

// getRoot GETs / n times through target's cleartext port on one kept-alive connection, each
// answer checked (200, the whole body), and counts the X-Cache-Status values.
func (h *harness) getRoot(t *testing.T, target string, n int) map[string]int {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	seen := map[string]int{}
	for range n {
		res, err := client.Do(h.targetRequest(t, target, "/"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || got != stack.RootBodyBytes {
			t.Fatalf("GET / through %s: status %d, %d bytes (%v)", target, res.StatusCode, got, err)
		}
		seen[res.Header.Get("X-Cache-Status")]++
	}
	return seen
}

// body is the body of / through target's cleartext port (direct's: the upstream's own), whose
// Content-Length must be its size.
func (h *harness) body(t *testing.T, target string) []byte {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	res, err := client.Do(h.targetRequest(t, target, "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET / through %s: status %d (%v)", target, res.StatusCode, err)
	}
	if cl := res.Header.Get("Content-Length"); cl != strconv.Itoa(len(b)) {
		t.Fatalf("GET / through %s: Content-Length %q for a body of %d bytes", target, cl, len(b))
	}
	return b
}

// servedRoot is how many answers of / the upstream counted on its cleartext listener (the one
// every proxy forwards to), from its GET /debug/served.
func (h *harness) servedRoot(t *testing.T) int64 {
	t.Helper()
	url := fmt.Sprintf("http://%s:%d/debug/served", h.cfg.Address, h.cfg.Upstream.H1C)
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var served map[string]map[string]struct {
		Requests int64 `json:"requests"`
	}
	if err := json.Unmarshal(body, &served); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, %v: %s", url, res.StatusCode, err, body)
	}
	root, found := served["h1c"]["/"]
	if !found {
		t.Fatalf("GET %s: no h1c / counter: %s", url, body)
	}
	return root.Requests
}

// offeredH2Streams is the concurrent streams target offers over h2, read as the runner reads it
// before each run (stack.Prober.OfferedStreams).
func (h *harness) offeredH2Streams(t *testing.T, target string) int {
	t.Helper()
	p, err := stack.NewProber(h.cfg.Hostname, h.cfg.Address, stack.CertsIn(filepath.Join(h.run, "certs")).CAFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := p.OfferedStreams(ctx, stack.H2, h.cfg.Targets[target].TLS)
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	return n
}
