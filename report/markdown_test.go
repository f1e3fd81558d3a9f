package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/calibrate"
)

// TestMarkdownRows renders the synthetic bench and looks for the rows its known inputs give,
// worked out by hand in the comments.
func TestMarkdownRows(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Markdown(&buf, synthBench()); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	want := []string{
		"# proxybench synth-1",
		"Client, proxies and upstream share 2 CPUs (no pinning)",
		// Headline: first the targets' own CPU per request (10 µs per letter of their name, in
		// synth), cheapest first, the invalid caddy h1 left out; then p99 at equal load…
		"- Target CPU per request, reused HTTP/1.1 TLS: nginx 50 µs; envoy 50 µs; direct 60 µs",
		"- Target CPU per request, reused HTTP/2 TLS: nginx 50 µs; caddy 50 µs; envoy 50 µs; direct 60 µs",
		"- p99 at equal load, HTTP/1.1 TLS at 2,000 req/s: direct 2.00 ms ≈ envoy 2.00 ms ≈ nginx 2.00 ms; caddy could not sustain it (≈: not told apart: closer than the client's own lateness, or overlapping over the runs)",
		// … then req/s: valid targets by median, the others said.
		"- Reused HTTP/3 QUIC: direct ~5.0k; envoy ~3.0k; caddy ~2.5k req/s (no h3: nginx)",
		"- Fresh HTTP/2 TLS: direct ~2.9k; nginx ~2.4k; caddy ~1.4k req/s (invalid: envoy)",
		// Run details.
		"| Profile | smoke |",
		"| Reused: duration | 10s |",
		"| HTTP/2 and HTTP/3 streams per connection | 16 |",
		"| Fresh: requests (one connection each) | 2000 |",
		"| Probe samples | 5 |",
		"| Upload probe body | 256 KiB |",
		"| Runs per throughput cell | 3 |",
		"| Machine | Test CPU, 2 CPUs, 6.1.0 |",
		"| Targets | restarted before each run (RESTART=1) |",
		"| CPUs shared by client, proxies and upstream | 2 |",
		"| proxies.nginx | 1.22.1 |",
		// Reused: 10000, 11000, 9000 → median 10,000, stdev 1000, CV 10.0; p50 3000/v → 0.30,
		// p99 10000/v → 1.00.
		// … and its client used 95% of its CPUs: the rate is flagged where it is read.
		"| HTTP/1.1 TLS | direct | 60 | 10,000 | 10.0 | 3/3 | baseline | 0.30 | 1.00 | 70% | 0.3 | — | yes, client-bound |",
		// 6000, 6100, 5900 → median 6,000, stdev 100, CV 1.7; 6000/8000 = 75%; p50 0.50, p99 1.67.
		"| HTTP/2 TLS | nginx | 50 | 6,000 | 1.7 | 3/3 | 75% | 0.50 | 1.67 | 70% | 528.0 | — | yes |",
		// 5000, 5500 valid, 4500 invalid: one invalid run makes the cell invalid, so no figure
		// (the valid runs stay listed under every run).
		"| HTTP/1.1 TLS | caddy | — | — | — | 2/3 | — | — | — | — | 0.3 | — | NO (1 of 3 runs invalid) |",
		"| reused-h1 | h1 | caddy | 1 | 5,000 |",
		"| HTTP/3 QUIC | nginx | — | — | — | — | — | — | — | — | — | — | no h3 |",
		"Compare HTTP/3 with HTTP/3 only",
		// Fresh, one run: n=1; 2500/3000 = 83%.
		"| HTTP/1.1 TLS | nginx | 600 | 3.00 | 9.50 | 2,500 | n=1 | 1/1 | 83% | 4.00 | 12.00 | 0.50 | 2.25 | 70% | — | — | yes |",
		"| HTTP/2 TLS | envoy | — | — | — | — | — | 0/1 | — | — | — | — | — | — | — | — | NO |",
		// k6 used 2.0 s of CPU for caddy's 0.8: its rate is more the client's than caddy's
		"| HTTP/1.1 TLS | caddy | 400 | 3.00 | 9.50 | 1,500 † | n=1 | 1/1 | 50% | 4.00 | 12.00 | 0.50 | 2.25 | 70% | — | — | yes, client-heavy (k6 used 2.5× the target's CPU) |",
		// envoy's k6 used 2.5× its CPU over its whole life but 1.6× while the requests ran:
		// more than the target (†), not client-heavy
		"| HTTP/1.1 TLS | envoy | 400 | 3.00 | 9.50 | 2,000 † | n=1 | 1/1 | 67% | 4.00 | 12.00 | 0.50 | 2.25 | 70% | — | — | yes |",
		// Probes: /json and /upload whole request 1.25, /stream first chunk 0.75, /sse first event 0.50.
		"| target | /json h1 | /json h2 | /upload h1 | /upload h2 | /stream h1 | /stream h2 | /sse h1 | /sse h2 |",
		"| nginx | 1.25 | 1.25 | 1.25 | 1.25 | 0.75 | 0.75 | 0.50 | 0.50 |",
		"| nginx | 5 / 0 | 0.50 | 150 | 5 / 0 | 0.50 | 150 |",
		"| caddy | 5 / 0 | 1.50 | 0.25 |",
		// Resources: direct reused-h1 mean CPU (7.8+8.58+7.02)/3 = 7.80 s, 60 µs/request, client 95% of what it could have and 70% of all used → bound.
		"| reused-h1 | direct | 60.0 | 7.80 | 16.0 | 14.0 | 95% / 70% (2 CPUs) | CLIENT-BOUND |",
		"| reused-h2 | nginx | 50.0 | 3.90 | 15.0 | 13.0 | 50% / 70% (2 CPUs) | no |",
		// Equal load: caddy dropped 37 → it could not sustain the rate (a result, not invalid).
		"| HTTP/1.1 TLS | caddy | 1 | 2,000 | 19,963 | 0.50 | 2.00 | 5.00 | 37 | yes: could not sustain 2,000 req/s |",
		"| HTTP/1.1 TLS | nginx | 1 | 2,000 | 20,000 | 0.50 | 2.00 | 5.00 | 0 | yes |",
		// Every run, the invalid one included, linked.
		"| reused-h1 | h1 | caddy | 3 | 4,500 | 0.67 | 2.22 | NO | [reused-h1-caddy.run3.json](reused-h1-caddy.run3.json) | — |",
		// Invalid cells with their reasons and what they measured.
		"- reused-h1 h1 caddy, run 3 of 3: 12 of 45000 checks failed: status is 200 (it measured 4,500 req/s, p99 2.22 ms: not counted)",
		"- fresh-h2 h2 envoy, the cell: 1990 new connections for 2000 requests: every request must open its own",
		"## Not run",
		"- reused-h3 h3 nginx: no h3 (nginx does not serve h3 (it serves h1, h1c, h2))",
	}
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("report.md lacks\n  %s", w)
		}
	}
	if t.Failed() {
		t.Logf("report.md:\n%s", md)
	}
	// Neither the invalid run nor a median of the runs that passed is a figure of the cell.
	for _, flattering := range []string{"| HTTP/1.1 TLS | caddy | 5,000 |", "| HTTP/1.1 TLS | caddy | 5,250 |"} {
		if strings.Contains(md, flattering) {
			t.Errorf("report.md gives the cell with an invalid run a figure: %s", flattering)
		}
	}
}

func TestMarkdownEmptyBench(t *testing.T) {
	t.Parallel()
	b := &Bench{Schema: 1, TestID: "empty"}
	b.Finish()
	var buf bytes.Buffer
	if err := Markdown(&buf, b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"share this machine's CPUs (their number was not recorded: no manifest)",
		"No reused-connection cells in this bench.",
		"No resource samples in this bench",
		"None: every run of every cell passed its checks.",
	} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("empty report lacks %q", w)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	t.Parallel()
	b := synthBench()
	b.Cells[0].Runs[0].Valid = false
	b.Cells[0].Runs[0].Invalid = []string{"a | pipe and <b>tag</b>"}
	b.Finish()
	var buf bytes.Buffer
	if err := Markdown(&buf, b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<b>") {
		t.Error("HTML in a reason went into the Markdown as HTML")
	}
}

func TestWriteFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := Write(dir, synthBench()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.md", "report.html"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The client's ceiling: a table of every client's run, a failed one with its error, and a
// headline line with k6's share of the native peer's frugality per protocol; none without a
// calibration.
func TestMarkdownClientCeiling(t *testing.T) {
	b := synthBench()
	b.Calibration = []*calibrate.Calibration{
		{Target: "direct", Proto: "h1c", Client: "k6-native", Requests: 120000, RPS: 11000, ClientCPUMicros: 130, ReqPerCPUSecond: 7700, TargetCPUMicros: 41, VsPeer: 0.11},
		{Target: "direct", Proto: "h1c", Client: "wrk", Requests: 380000, RPS: 38000, ClientCPUMicros: 14, ReqPerCPUSecond: 71000, TargetCPUMicros: 28},
		{Target: "direct", Proto: "h2", Client: "h2load", Err: "h2load: TLS handshake failed"},
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, b); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"## The client's ceiling",
		"| HTTP/1.1 cleartext | direct | k6-native | 11,000 | 130.0 | 7,700 | 41.0 | 0.11 |",
		"| HTTP/1.1 cleartext | direct | wrk | 38,000 | 14.0 | 71,000 | 28.0 | — |",
		"h2load: TLS handshake failed",
		"it makes 0.11 HTTP/1.1 cleartext of the requests per CPU-second a native client",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	b.Calibration = nil
	buf.Reset()
	if err := Markdown(&buf, b); err != nil {
		t.Fatal(err)
	}
	if md := buf.String(); !strings.Contains(md, "No calibration in this bench") || strings.Contains(md, "Client: k6 makes") {
		t.Errorf("without a calibration, report.md must say so and have no client line:\n%s", md)
	}
}
