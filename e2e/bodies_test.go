package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/extensions/upstream"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
)

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
