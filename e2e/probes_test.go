package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
)

// What a site does to save bandwidth: compress whatever a client accepts, event streams and
// proxied responses included.
const gzip = "gzip on; gzip_types text/event-stream application/octet-stream application/json; " +
	"gzip_proxied any; gzip_min_length 0;"

// heldBack is nginx holding a stream back: with proxy_buffering on, nothing flushes the gzip
// stream, so nginx sends nothing, headers included, until the upstream's response has ended.
var heldBack = [][2]string{inLocation(gzip), {"proxy_buffering off;", "proxy_buffering on;"}}

// TestProbesMeetTheProxyAsABrowserDoes proves that the json, stream and sse probes catch what a
// browser meets behind a proxy. The probes ask as a browser does (Accept-Encoding included), so
// a proxy that compresses for such clients is invalid, named as compressed; and the upstream no
// longer switches nginx's buffering off for the probes (X-Accel-Buffering), so a proxy whose
// config holds the stream back is invalid too, with the timing rules it broke. The same probes
// through nginx as proxies/nginx configures it, and direct, are valid. The proxies are throwaway
// copies of nginx's folder, brought up with the real CLI.
func TestProbesMeetTheProxyAsABrowserDoes(t *testing.T) {
	const plain, gzipped, held = "nginx-plain", "nginx-gzip", "nginx-gzip-buffered"
	h := variantHarness(t, 700,
		nginxVariant{name: plain},
		// With proxy_buffering off (proxies/nginx), nginx flushes its gzip stream at each
		// upstream flush: the events are compressed but keep their timing.
		nginxVariant{gzipped, [][2]string{inLocation(gzip)}},
		// With proxy_buffering on, nothing flushes the gzip stream: nginx sends nothing, headers
		// included, until the upstream's response has ended. Before, the upstream's
		// X-Accel-Buffering: no switched buffering off for exactly these responses, and the
		// probes asked for no compression: this config passed them.
		nginxVariant{held, heldBack},
	)
	h.up(t)

	// The throwaway configs do what they are meant to, seen by a plain Go client that accepts
	// gzip: both compress /sse, and the buffered one holds its first byte back to the end.
	h.checkCompresses(t, gzipped, "/sse?count=1&interval_ms=0")
	h.checkCompresses(t, held, "/sse?count=1&interval_ms=0")
	h.checkHoldsBack(t, held, "/sse?count=3&interval_ms=150", 250*time.Millisecond)

	const compressed = "compressed by the proxy: Content-Encoding gzip in 2 of 2 responses"
	tests := []struct {
		scenario, target string
		want             []string // prefixes of reasons the result must give; none: valid
	}{
		{scenario: "json", target: stack.Direct},
		{scenario: "stream", target: stack.Direct},
		{scenario: "sse", target: stack.Direct},
		{scenario: "json", target: plain},
		{scenario: "stream", target: plain},
		{scenario: "sse", target: plain},
		{scenario: "json", target: gzipped, want: []string{compressed}},
		{scenario: "stream", target: gzipped, want: []string{compressed}},
		{scenario: "sse", target: gzipped, want: []string{compressed}},
		{scenario: "json", target: held, want: []string{compressed}},
		{scenario: "stream", target: held, want: []string{
			compressed, "first chunk held back in 2 of 2 responses", "chunks released together in 2 of 2 responses",
		}},
		{scenario: "sse", target: held, want: []string{
			compressed, "first event held back in 2 of 2 responses", "events released together in 2 of 2 responses",
		}},
	}
	// h1c and h2 (TLS, ALPN h2, what browsers speak): h1 and h3 go through the same gzip and
	// buffering in nginx, and cost a k6 run each.
	for _, proto := range []string{"h1c", "h2"} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%s/%s", tc.scenario, tc.target, proto), func(t *testing.T) {
				testid := fmt.Sprintf("e2e-probes-%s-%s-%s", tc.scenario, tc.target, proto)
				out, err := h.proxybench(t, "k6", "-scenario", tc.scenario, "-targets", tc.target, "-proto", proto, "-testid", testid)
				if len(tc.want) == 0 && err != nil {
					t.Errorf("proxybench k6: %v\n%s", err, out)
				}
				if len(tc.want) > 0 && err == nil {
					t.Errorf("proxybench k6 succeeded on an invalid cell\n%s", out)
				}
				file := filepath.Join(h.results, testid, fmt.Sprintf("%s-%s-%s.json", tc.scenario, proto, tc.target))
				r, err := result.LoadResult(file)
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				logFigures(t, r)
				if len(tc.want) == 0 {
					checkResult(t, tc.scenario, r)
					return
				}
				if r.Valid {
					t.Fatalf("valid, want invalid with %q", tc.want)
				}
				for _, want := range tc.want {
					if !hasReason(r.Invalid, want) {
						t.Errorf("invalid %q: no reason starting %q", r.Invalid, want)
					}
				}
			})
		}
	}
}

// checkCompresses asserts that target's h1c port gzips path for a client that accepts it.
func (h *harness) checkCompresses(t *testing.T, target, path string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", h.cfg.Targets[target].H1C, path), nil)
	req.Host = fmt.Sprintf("%s:%d", h.cfg.Hostname, h.cfg.Targets[target].H1C)
	// set by hand, so that Go's client hands the body over as it came
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Content-Encoding"); got != "gzip" {
		t.Fatalf("%s %s: Content-Encoding %q, want gzip: the throwaway config does not compress", target, path, got)
	}
}

// checkHoldsBack asserts that target's h1c port, asked by a client that accepts gzip, sends
// path's first byte of body no sooner than after.
func (h *harness) checkHoldsBack(t *testing.T, target, path string, after time.Duration) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", h.cfg.Targets[target].H1C, path), nil)
	req.Host = fmt.Sprintf("%s:%d", h.cfg.Hostname, h.cfg.Targets[target].H1C)
	req.Header.Set("Accept-Encoding", "gzip")
	start := time.Now()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := res.Body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < after {
		t.Fatalf("%s %s: first byte of body after %v, want the stream held back (≥ %v): the throwaway config does not buffer", target, path, took, after)
	}
}

func hasReason(reasons []string, prefix string) bool {
	for _, r := range reasons {
		if strings.HasPrefix(r, prefix) {
			return true
		}
	}
	return false
}

// logFigures logs a probe's first-event or first-chunk figures: -v shows them for each cell.
func logFigures(t *testing.T, r *result.Result) {
	t.Helper()
	for _, k := range []string{"sse_first_event", "sse_event_gap", "stream_first_chunk", "stream_chunk_gap"} {
		if s, ok := r.Extra[k]; ok {
			t.Logf("%s/%s/%s %s ms: min %.3f p50 %.3f max %.3f", r.Scenario, r.Target, r.Proto, k, s.Min, s.P50, s.Max)
		}
	}
}
