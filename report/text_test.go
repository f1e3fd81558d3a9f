package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestTextThroughput prints for the terminal, first, the targets' own CPU per request and p99 at
// equal load, then the synthetic bench's throughput tables: the same medians, CVs, valid runs,
// fractions of direct and client CPU shares as report.md, aligned, and nothing of the other
// tables.
func TestTextThroughput(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Text(&buf, synthBench()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	space := regexp.MustCompile(` +`)
	flat := space.ReplaceAllString(out, " ")
	lead := strings.Index(out, "== Per protocol, what the client cannot distort")
	if reused := strings.Index(out, "== Reused-connection throughput"); lead < 0 || reused < lead {
		t.Errorf("the summary does not lead with what the client cannot distort:\n%s", out)
	}
	for _, want := range []string{
		"Target CPU per request, reused HTTP/1.1 TLS: nginx 50 µs; envoy 50 µs; direct 60 µs\n",
		// fresh: per new connection, cheapest first, with the new connection's time to first byte
		"Target CPU per new connection, fresh HTTP/1.1 TLS: direct 400 µs (first byte 3.00 ms); caddy 400 µs (first byte 3.00 ms); envoy 400 µs (first byte 3.00 ms); nginx 600 µs (first byte 3.00 ms)\n",
		"p99 at equal load, HTTP/1.1 TLS at 2,000 req/s: direct 2.00 ms ≈ envoy 2.00 ms ≈ nginx 2.00 ms; caddy could not sustain it (≈: not told apart: closer than the client's own lateness, or overlapping over the runs)\n",
		"== Reused-connection throughput (testid synth-1, median over the valid runs)",
		"== Fresh-connection cost and throughput (testid synth-1, median over the valid runs)",
		// 10000, 11000, 9000 → median 10,000, CV 10.0 (as TestMarkdownRows works out)
		" HTTP/1.1 TLS direct 60 10,000 10.0 3/3 baseline 0.30 1.00 70% 0.3 — yes, client-bound\n",
		"Compare HTTP/3 with HTTP/3 only",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, not := range []string{"Resources", "Equal-load", "Run details"} {
		if strings.Contains(out, not) {
			t.Errorf("%q is not a throughput table, yet printed:\n%s", not, out)
		}
	}
}
