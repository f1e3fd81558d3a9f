package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/extensions/upstream"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// TestBodySizes runs the body-size sweep as `make bench MODES=bodies` does, at two sizes (1 KiB
// and 1 MiB) against direct and nginx over h1c and h2 (the native loop) and h3
// (k6/x/proxybench/http3), the tiny runs' 2 s each: every point a valid run whose every body
// was checked (each response one check, all passed; uploads counted whole by the upstream),
// with its MB/s and the target's CPU per MB, and the report's grids and curves made of them.
// h1 is h1c's loop over TLS (extensions/load tests both). Not 8 MiB: over h3 a request of it
// outlasts the tiny runs' 2 s window, so none would count; TestLieBodyCut moves 8 MiB bodies.
func TestBodySizes(t *testing.T) {
	skipShort(t)
	h := harnessAt(t, 3050, "nginx")
	const testid = "e2e-bodies"
	h.downAfterBench(t)
	sizes, protos := []int{result.KiB, result.MiB}, []string{"h1c", "h2", "h3"}
	start := time.Now()
	out, err := h.proxybench(t, "bench", "-targets", "nginx", "-modes", "bodies", "-body-sizes", "1KiB,1MiB", "-protos", strings.Join(protos, ","),
		"-calibrate-seconds", "0", "-testid", testid)
	took := time.Since(start)
	if err != nil {
		t.Errorf("bench -modes bodies: %v\n%s", err, out)
	}
	t.Logf("bench -modes bodies over direct and nginx, %d sizes, %d protocols, both directions: %v", len(sizes), len(protos), took.Round(time.Second))
	for _, want := range []string{
		"bodies-down h1c 1MiB nginx", "bodies-up h3 1KiB direct",
		"== Body sizes, download: MB/s  (testid " + testid, "== Body sizes, upload: target CPU ms per MB",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bench output lacks %q", want)
		}
	}
	dir := filepath.Join(h.results, testid)
	b, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Cells) != 0 || len(b.EqualLoad) != 0 {
		t.Errorf("MODES=bodies ran %d matrix cells and %d equal-load runs, want none", len(b.Cells), len(b.EqualLoad))
	}
	if want := 2 * len(sizes) * len(protos) * 2; len(b.Bodies) != want {
		t.Errorf("%d points of the sweep, want %d", len(b.Bodies), want)
	}
	for _, c := range b.Bodies {
		name := fmt.Sprintf("%s %s %s %s", c.Scenario, c.Proto, result.SizeLabel(int(c.Bytes)), c.Target)
		if !c.Valid || c.NoProto != "" {
			t.Errorf("%s: valid %v, not run %q: %v", name, c.Valid, c.NoProto, c.Invalid)
			continue
		}
		if !slices.Contains(sizes, int(c.Bytes)) || c.MBPerS == nil || *c.MBPerS <= 0 || c.CPUMsPerMB == nil || *c.CPUMsPerMB <= 0 {
			t.Errorf("%s: size %v, MB/s %s, CPU ms/MB %s: want one of the sizes and both figures above 0", name, c.Bytes, figure(c.MBPerS), figure(c.CPUMsPerMB))
		}
		r, err := result.LoadResult(filepath.Join(dir, c.File))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkResult(t, c.Scenario, r)
		if r.Checks.Passes != r.Requests {
			t.Errorf("%s: %v checks for %v requests: want every body checked, one check each", name, r.Checks.Passes, r.Requests)
		}
		client := runner.ClientNative
		if c.Proto == "h3" {
			client = "k6/x/proxybench/http3"
		}
		if r.Client != client || r.Body == nil || r.Body.Direction != c.Direction || r.Route != map[string]string{result.Download: "/bytes", result.Upload: "/upload"}[c.Direction] {
			t.Errorf("%s: client %s, body %+v, route %s", name, r.Client, r.Body, r.Route)
		}
		if u := r.UpstreamRequests; u == nil || u.Answered < u.Completed-u.InFlight {
			t.Errorf("%s: the upstream's audit %+v: want every answer the upstream's", name, u)
		}
		if want := fmt.Sprintf("%s-%s-%s-%s.json", c.Scenario, c.Proto, result.SizeLabel(int(c.Bytes)), c.Target); c.File != want {
			t.Errorf("%s: file %s, want %s", name, c.File, want)
		}
	}
	if err := report.Check(b); err != nil {
		t.Errorf("report.Check: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"## Body sizes, download: MB/s", "## Body sizes, upload: req/s", "](curve-bodies-download-h2.svg)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, f := range []string{"curve-bodies-download-h1c.svg", "curve-bodies-upload-h3.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("no %s beside report.md: %v", f, err)
		}
	}
}

// figure is an optional figure as a message says it.
func figure(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}

// TestLieBodyCut: a target that ends large bodies short is invalid with the reason, never a
// hang, whether it breaks the connection after the first MiB (its read of the upstream gave up)
// or leaves it open and silent (it stopped forwarding); one that rewrites a byte deep in an
// 8 MiB body is invalid with the byte. Each liar passes the bodies it does not lie about, and
// direct passes them all.
func TestLieBodyCut(t *testing.T) {
	const cut, stall, rewrite, at = "liar-cut", "liar-stall", "liar-rewrite", 5_000_001
	h := harnessAt(t, 3150, stack.Direct)
	h.addLiars(t,
		liarTarget{cut, "every body over 1 MiB ends after its first MiB, Content-Length kept, its connection broken", "-cut-over 1048576"},
		liarTarget{stall, "every body over 1 MiB stops after its first MiB, its connection left open and silent", "-stall-over 1048576"},
		liarTarget{rewrite, "one byte of every body changed, same length", fmt.Sprintf("-rewrite-at %d", at)},
	)
	h.upAll(t, cut, stall, rewrite)
	const big = 8 * result.MiB

	t.Run("the targets do lie", func(t *testing.T) {
		want := upstream.Pattern(big)
		got, err := h.bytesThrough(t, cut, big)
		if len(got) != result.MiB || err == nil || !bytes.Equal(got, want[:result.MiB]) {
			t.Errorf("%s: %d bytes of %d, then %v: want the first MiB, then the connection broken", cut, len(got), big, err)
		}
		got, err = h.bytesThrough(t, stall, big)
		if len(got) != result.MiB || !errors.Is(err, errSilent) {
			t.Errorf("%s: %d bytes of %d, then %v: want the first MiB, then silence", stall, len(got), big, err)
		}
		got, err = h.bytesThrough(t, rewrite, big)
		if err != nil || len(got) != big || got[at] == want[at] || !bytes.Equal(got[:at], want[:at]) || !bytes.Equal(got[at+1:], want[at+1:]) {
			t.Errorf("%s: %d bytes (%v): want %d, differing at byte %d only", rewrite, len(got), err, big, at)
		}
	})

	// timeout is how long a run may take: warm-up, DURATION, the request timeout of the one a
	// stall holds (lib/bodysizes.js BODY_TIMEOUT_MS), k6's start and end, with room
	const timeout = time.Minute
	t.Setenv("BODY_BYTES", fmt.Sprint(big))
	h.runBodies(t, stack.Direct, "e2e-lie-bodies-direct", timeout, "")
	cutShort := fmt.Sprintf("body cut short in %%s responses: each ended before its %d bytes", big)
	h.runBodies(t, cut, "e2e-lie-bodies-cut", timeout, cutShort)
	h.runBodies(t, stall, "e2e-lie-bodies-stall", timeout, cutShort)
	h.runBodies(t, rewrite, "e2e-lie-bodies-rewrite", timeout, fmt.Sprintf("body differs from the upstream's at byte %d of %d", at, big))
	// what they do not lie about: a body under the cut, a size the rewrite misses
	t.Setenv("BODY_BYTES", fmt.Sprint(64*result.KiB))
	for _, liar := range []string{cut, stall, rewrite} {
		h.runBodies(t, liar, "e2e-lie-bodies-small-"+liar, timeout, "")
	}
}

// runBodies runs bodies-down over h1c against target with the real CLI (BODY_BYTES from the
// environment) and asserts that it ended within timeout and is valid, or, with want (%s for
// a count), invalid with a reason matching it, the command failing and its table saying so.
func (h *harness) runBodies(t *testing.T, target, testid string, timeout time.Duration, want string) {
	t.Helper()
	const scenario = "bodies-down"
	start := time.Now()
	out, err := h.proxybench(t, "k6", "-scenario", scenario, "-proto", "h1c", "-targets", target, "-testid", testid)
	took := time.Since(start)
	t.Logf("k6 %s h1c %s: %v in %v\n%s", scenario, target, err, took.Round(time.Millisecond), out)
	if took > timeout {
		t.Errorf("%s on %s took %v, want at most %v: a target must not hold a run", scenario, target, took, timeout)
	}
	r, lerr := result.LoadResult(filepath.Join(h.results, testid, scenario+"-h1c-"+target+".json"))
	if lerr != nil {
		t.Fatalf("%v\n%s", lerr, out)
	}
	if want == "" {
		if err != nil {
			t.Errorf("%s on %s: %v", scenario, target, err)
		}
		checkResult(t, scenario, r)
		return
	}
	if err == nil || r.Valid {
		t.Errorf("%s on %s: exited %v, valid %v: want it invalid", scenario, target, err, r.Valid)
	}
	prefix, suffix, _ := strings.Cut(want, "%s")
	if !slices.ContainsFunc(r.Invalid, func(s string) bool { return strings.Contains(s, prefix) && strings.Contains(s, suffix) }) {
		t.Errorf("%s on %s: invalid %q: no reason matching %q", scenario, target, r.Invalid, want)
	}
	if !tableSaysInvalid(out, target, prefix) {
		t.Errorf("%s on %s: the table (logged above) does not show the cell invalid with %q", scenario, target, prefix)
	}
}

// errSilent is bytesThrough's: the answer stopped coming and the connection stayed open.
var errSilent = errors.New("no byte for 2 s, the connection open")

// bytesThrough GETs /bytes?size=n through target's cleartext port and returns what came of the
// body, and how it ended (nil: whole).
func (h *harness) bytesThrough(t *testing.T, target string, n int) ([]byte, error) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	res, err := client.Do(h.targetRequest(t, target, fmt.Sprintf("/bytes?size=%d", n)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.ContentLength != int64(n) {
		t.Fatalf("GET /bytes?size=%d through %s: status %d, Content-Length %d", n, target, res.StatusCode, res.ContentLength)
	}
	var body bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&body, res.Body)
		done <- err
	}()
	for last := -1; ; {
		select {
		case err := <-done:
			return body.Bytes(), err
		case <-time.After(2 * time.Second):
			if body.Len() == last {
				res.Body.Close()
				// the copy ends with the body closed, saying so
				return body.Bytes(), errors.Join(errSilent, <-done)
			}
			last = body.Len()
		}
	}
}
