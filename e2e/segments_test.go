package e2e

import (
	"bytes"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/extensions/histogram"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
)

// k6 as the scripts and the runner run it: SEGMENTS=2 splits a run over two k6 instances
// (execution segments, started paused and resumed together through their REST APIs), and the
// merged result is the whole plan's: a fresh run's requests are REQUESTS exactly, each on a
// new connection, as one instance's are; a reused run merges too, behind a proxy as well. The
// merged percentiles come from the instances' histograms: they lie between the instances' own
// (widened by the histogram's error), and one instance's histogram says what k6's own
// percentiles of it say, within that error.
func TestSegmentedRuns(t *testing.T) {
	h := harnessAt(t, 2100, "nginx")
	out, err := h.proxybench(t, "up")
	t.Cleanup(func() { h.down(t) })
	if err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	const requests = 2000
	k6 := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), append([]string{"k6"}, args...)...)
		cmd.Dir, cmd.Env = h.root, h.env(env...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Run(); err != nil {
			t.Fatalf("k6 %s: %v\n%s", strings.Join(args, " "), err, log.String())
		}
		return log.String()
	}
	// FRESH_DURATION=1ms: the native instance sends REQUESTS exactly, as the split k6/http one does
	freshEnv := []string{"REQUESTS=2000", "FRESH_CONNECTIONS=8", "FRESH_DURATION=1ms"}

	k6(freshEnv, "-scenario", "fresh-h1c", "-targets", "direct", "-testid", "e2e-seg-one")
	one := loadResult(t, filepath.Join(h.results, "e2e-seg-one", "fresh-h1c-direct.json"))
	out = k6(freshEnv, "-scenario", "fresh-h1c", "-targets", "direct", "-segments", "2", "-testid", "e2e-seg-fresh")
	dir := filepath.Join(h.results, "e2e-seg-fresh")
	merged := loadResult(t, filepath.Join(dir, "fresh-h1c-direct.json"))
	if merged.Requests != requests || one.Requests != requests {
		t.Errorf("fresh-h1c: merged requests %v, one instance's %v, want the plan's %d both", merged.Requests, one.Requests, requests)
	}
	if merged.NewConnections == nil || *merged.NewConnections != merged.Requests {
		t.Errorf("fresh-h1c: merged new connections %v for %v requests, want one each", merged.NewConnections, merged.Requests)
	}
	if !merged.Valid || merged.RPS == nil || *merged.RPS <= 0 || merged.DurationS <= 0 {
		t.Errorf("fresh-h1c merged: valid %v %v, rps %v over %v s", merged.Valid, merged.Invalid, merged.RPS, merged.DurationS)
	}
	if rows := tableRows(out, "direct"); rows != 1 {
		t.Errorf("fresh-h1c split in 2: %d table rows for direct, want one merged row:\n%s", rows, out)
	}
	insts := h.segmentInstances(t, dir, "fresh-h1c-direct", 2)
	var sum float64
	for _, in := range insts {
		sum += in.Result.Requests
		if !in.Result.Valid {
			t.Errorf("fresh-h1c %s: invalid %v", in.File, in.Result.Invalid)
		}
	}
	if sum != requests {
		t.Errorf("fresh-h1c: the instances did %v requests in all, want %d", sum, requests)
	}
	t.Logf("fresh-h1c: one instance %v requests; split in 2: %v + %v = %v requests, %v new connections, %v req/s over %v s, p50/p99 %v/%v ms (instances' p99 %v, %v)",
		one.Requests, insts[0].Result.Requests, insts[1].Result.Requests, merged.Requests, *merged.NewConnections, *merged.RPS, merged.DurationS,
		merged.Latency.P50, merged.Latency.P99, insts[0].Result.Latency.P99, insts[1].Result.Latency.P99)
	checkMergedPercentiles(t, "fresh-h1c", merged, insts)
	checkHistogramAgreesWithK6(t, insts[0], "http_req_duration{scenario:fresh-h1c}")

	out = k6(nil, "-scenario", "reused-h2", "-targets", "all", "-segments", "2", "-testid", "e2e-seg-reused")
	for _, target := range []string{"direct", "nginx"} {
		dir := filepath.Join(h.results, "e2e-seg-reused")
		merged := loadResult(t, filepath.Join(dir, "reused-h2-"+target+".json"))
		checkResult(t, "reused-h2", merged)
		if rows := tableRows(out, target); rows != 1 {
			t.Errorf("reused-h2 %s split in 2: %d table rows, want one merged row:\n%s", target, rows, out)
		}
		insts := h.segmentInstances(t, dir, "reused-h2-"+target, 2)
		var sum float64
		for _, in := range insts {
			sum += in.Result.Requests
		}
		if sum != merged.Requests {
			t.Errorf("reused-h2 %s: merged %v requests, the instances %v", target, merged.Requests, sum)
		}
		t.Logf("reused-h2 %s split in 2: %v + %v = %v requests, %v req/s, p50/p99 %v/%v ms (instances' p99 %v, %v), valid %v",
			target, insts[0].Result.Requests, insts[1].Result.Requests, merged.Requests, *merged.RPS,
			merged.Latency.P50, merged.Latency.P99, insts[0].Result.Latency.P99, insts[1].Result.Latency.P99, merged.Valid)
		checkMergedPercentiles(t, "reused-h2 "+target, merged, insts)
		checkHistogramAgreesWithK6(t, insts[1], "http_req_duration{scenario:reused-h2}")
	}
}

func loadResult(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := result.LoadResult(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// loadResults reads every cell's result of a run's directory.
func loadResults(t *testing.T, dir string) []*result.Result {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []*result.Result
	for _, f := range files {
		out = append(out, loadResult(t, f))
	}
	return out
}

// tableRows counts the rows of the printed tables that are target's.
func tableRows(out, target string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == target {
			n++
		}
	}
	return n
}

// segmentInstances loads the n instance results of a split cell, which the runner keeps
// beside the merged one.
func (h *harness) segmentInstances(t *testing.T, dir, cell string, n int) []*result.Instance {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, runner.SegmentsDir, cell+".*of*.json"))
	if len(files) != n {
		t.Fatalf("%s: instance results %v, want %d", cell, files, n)
	}
	var insts []*result.Instance
	for _, f := range files {
		in, err := result.LoadInstance(f)
		if err != nil {
			t.Fatal(err)
		}
		if in.Segment == nil || len(in.Histograms) == 0 {
			t.Fatalf("%s: no segment part or histograms", f)
		}
		insts = append(insts, in)
	}
	return insts
}

// checkMergedPercentiles: a quantile of the union of two sample sets lies between the sets'
// own; the merged one is read from histograms (RelErr) and every figure is rounded to 3 digits.
func checkMergedPercentiles(t *testing.T, cell string, merged *result.Result, insts []*result.Instance) {
	t.Helper()
	pick := map[string]func(result.Stats) float64{
		"p50": func(s result.Stats) float64 { return s.P50 },
		"p90": func(s result.Stats) float64 { return s.P90 },
		"p95": func(s result.Stats) float64 { return s.P95 },
		"p99": func(s result.Stats) float64 { return s.P99 },
	}
	for name, p := range pick {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, in := range insts {
			lo, hi = math.Min(lo, p(in.Result.Latency)), math.Max(hi, p(in.Result.Latency))
		}
		lo, hi = lo*(1-histogram.RelErr)-0.0005, hi*(1+histogram.RelErr)+0.0005
		if got := p(merged.Latency); got < lo || got > hi {
			t.Errorf("%s: merged latency %s %v, outside the instances' [%v, %v] widened by %.2f%%", cell, name, got, lo, hi, histogram.RelErr*100)
		}
	}
}

// checkHistogramAgreesWithK6 holds one instance's histogram of trend to k6's own percentiles
// of the same samples, read from the k6 summary data its result carries (not rounded).
func checkHistogramAgreesWithK6(t *testing.T, in *result.Instance, trend string) {
	t.Helper()
	k6 := k6Values(t, in.File)[trend]
	h := in.Histograms[trend]
	if h == nil || len(k6) == 0 {
		t.Fatalf("%s: no %s in its histograms or its k6 data", in.File, trend)
	}
	if float64(h.Count()) != k6["count"] {
		t.Errorf("%s: histogram of %d samples, k6 counted %v", in.File, h.Count(), k6["count"])
	}
	for _, p := range []struct {
		key string
		q   float64
	}{{"med", 0.5}, {"p(90)", 0.9}, {"p(95)", 0.95}, {"p(99)", 0.99}} {
		want, got := k6[p.key], h.Quantile(p.q)
		if math.Abs(got-want) > want*histogram.RelErr {
			t.Errorf("%s: %s %s from the histogram %v, k6 says %v: more than %.2f%% apart", in.File, trend, p.key, got, want, histogram.RelErr*100)
		}
	}
}
