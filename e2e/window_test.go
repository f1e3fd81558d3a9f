package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/proxybench/proxybench/extensions/upstream"
	"github.com/proxybench/proxybench/runner"
)

// slowTarget serves / (the upstream's body, which the client compares byte for byte) over
// cleartext HTTP/1.1 on loopback, each response after a delay drawn from an exponential
// distribution (mean `mean`, cut at 4×mean so setup's probe never times out): a target whose
// latency is a large part of the window.
func slowTarget(t *testing.T, mean time.Duration) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := upstream.Pattern(upstream.RootBodySize)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := min(time.Duration(rand.ExpFloat64()*float64(mean)), 4*mean)
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// singleTargetFile writes a targets file whose one target, name, is served on h1cPort (its TLS
// port is never dialled by an h1c scenario).
func singleTargetFile(t *testing.T, name string, h1cPort int) string {
	t.Helper()
	doc := map[string]any{
		"hostname": "bench.test", "address": "127.0.0.1",
		"targets": map[string]any{name: map[string]int{"tls": h1cPort + 1, "h1c": h1cPort}},
	}
	data, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "targets.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReusedCountsOnlyTheMeasuredWindow runs reused-h1c against a slow target (200 connections,
// mean latency 2 s, so ~100 req/s) for DURATION 5 s and 30 s. Requests that k6 lets finish in
// its graceful stop after DURATION must not count: counted, they add about one request per
// connection to the window (+40% at 5 s, +7% at 30 s), and the short run flatters the target.
// Counted honestly, both runs measure the same rate.
func TestReusedCountsOnlyTheMeasuredWindow(t *testing.T) {
	skipShort(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	k6 := filepath.Join(root, "bin", "k6")
	if _, err := os.Stat(k6); err != nil {
		t.Fatalf("bin/k6 is missing: run `make test` (it builds everything first)")
	}
	const (
		conns = 200
		mean  = 2 * time.Second
	)
	// the mean of the cut exponential: mean × (1 − e^−4)
	want := conns / (mean.Seconds() * (1 - math.Exp(-4)))
	r := &runner.Runner{
		K6: k6, ScenariosDir: filepath.Join(root, "scenarios"), ResultsDir: t.TempDir(),
		TargetsFile: singleTargetFile(t, "slow", slowTarget(t, mean)),
		Stdout:      &bytes.Buffer{}, Stderr: &bytes.Buffer{},
	}
	// both clients: the native loop counts late requests itself, the k6/http scripts in JS
	for _, client := range []string{runner.ClientNative, runner.ClientK6} {
		t.Run(client, func(t *testing.T) {
			r.Client = client
			windowRates(t, r, conns, want)
		})
	}
}

// windowRates runs reused-h1c at DURATION 5 s and 30 s against the slow target and holds both
// rates to want, the rate it serves.
func windowRates(t *testing.T, r *runner.Runner, conns int, want float64) {
	rps := map[string]float64{}
	for _, d := range []string{"5s", "30s"} {
		j := runner.Job{Scenario: "reused-h1c", Target: "slow", Env: []string{
			"DURATION=" + d, "WARMUP=0", "CONNECTIONS=" + strconv.Itoa(conns),
		}}
		res := r.Run(context.Background(), "window-"+r.Client+"-"+d, j)
		if res.Err != "" || res.RPS == nil {
			t.Fatalf("DURATION %s: %s\n%s", d, res.Err, r.Stderr)
		}
		if !res.Valid {
			t.Errorf("DURATION %s: invalid: %v", d, res.Invalid)
		}
		if wantClient := map[string]string{runner.ClientNative: "native", runner.ClientK6: "k6/http"}[r.Client]; res.Client != wantClient {
			t.Errorf("DURATION %s: the result says client %q, want %q", d, res.Client, wantClient)
		}
		rps[d] = *res.RPS
		t.Logf("DURATION %s: %.0f requests measured, %.1f req/s (the target serves %.1f)", d, res.Requests, *res.RPS, want)
	}
	// 5 s at ~100 req/s is ~500 requests: ±4.5% of Poisson noise; 15% leaves room for three
	// standard deviations while the graceful stop's +40% cannot pass.
	for d, got := range rps {
		if math.Abs(got/want-1) > 0.15 {
			t.Errorf("DURATION %s: %.1f req/s, want %.1f ± 15%%: requests outside the window were counted", d, got, want)
		}
	}
	if ratio := rps["5s"] / rps["30s"]; math.Abs(ratio-1) > 0.15 {
		t.Errorf("req/s at DURATION 5 s is %.2f× that at 30 s, want 1 ± 0.15", ratio)
	}
}
