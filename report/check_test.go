package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSynthetic(t *testing.T) {
	t.Parallel()
	if err := Check(synthBench()); err != nil {
		t.Errorf("Check of the synthetic bench: %v", err)
	}
}

// TestRealRunResults builds the report from result files a real k6 run wrote on this project's
// stack (testdata/real: reused-h2, fresh-h2, sse and ws against direct, nginx and caddy; k6's
// own summary cut to the http_reqs count the report reads).
func TestRealRunResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join("testdata", "real", "*.json"))
	if len(files) < 8 {
		t.Fatalf("testdata/real has %d files", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(b); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{
		// 4462.4 req/s against direct's 4934.2 (reused-h2-*.json): 90%.
		"| HTTP/2 TLS | nginx | — | 4,462 | n=1 | 1/1 | 90% | 74.80 | 313 | — | — | — | yes |",
		"| HTTP/2 TLS | direct | — | 4,934 | n=1 | 1/1 | baseline |",
		// fresh-h2: 200 requests, connect and TLS handshake from k6's extra trends.
		"| HTTP/2 TLS | nginx | — | — | — | 973 | n=1 | 1/1 | 158% | 12.27 | 38.56 | 2.49 | 11.45 | — | — | — | yes |",
		// sse first event (sse_first_event p50) and ws connect/echo.
		"| nginx | 5 / 0 | 0.45 | 150 |",
		"| nginx | 5 / 0 | 1.87 | 0.28 |",
		"| Reused: connections | 32 |",
		"| Fresh: requests (one connection each) | 200 |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report.md:\n%s", md)
	}
}

func TestCheckCatchesGaps(t *testing.T) {
	t.Parallel()
	b := synthBench()
	b.find("reused-h1", "caddy", "h1").Runs[2].File = ""
	if err := Check(b); err == nil || !strings.Contains(err.Error(), "reused-h1 h1 caddy run 3: no result file") {
		t.Errorf("Check of a run without its file: %v", err)
	}
}
