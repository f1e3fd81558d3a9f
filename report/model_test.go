package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestFinishSummariesLeaveInvalidRunsOut(t *testing.T) {
	t.Parallel()
	b := synthBench()
	c := b.find("reused-h1", "caddy", "h1")
	if c == nil {
		t.Fatal("no reused-h1 caddy cell")
	}
	// Runs 5000, 5500 valid; 4500 invalid: the summary keeps the valid ones only (with the
	// invalid run averaged in the median would be 5000), and the one invalid run makes the
	// cell invalid, so it has no vs direct to rank it by.
	if c.RPS.N != 2 || !near(c.RPS.Median, 5250) || !near(c.RPS.Min, 5000) || !near(c.RPS.Max, 5500) {
		t.Errorf("caddy reused-h1 RPS = %+v, want the two valid runs only", c.RPS)
	}
	if c.Valid || len(c.Invalid) != 1 || !strings.HasPrefix(c.Invalid[0], "run 3 of 3: 12 of 45000 checks failed") {
		t.Errorf("caddy reused-h1: valid %v, invalid %q: want invalid for its one invalid run", c.Valid, c.Invalid)
	}
	if c.VsDirect != nil {
		t.Errorf("caddy reused-h1 vs direct = %v, want none (the cell is invalid)", *c.VsDirect)
	}

	d := b.find("reused-h1", "direct", "h1")
	// 10000, 11000, 9000: median 10000, sample stdev 1000, CV 10%.
	if want := (result.Summary{N: 3, Median: 10000, Mean: 10000, Stdev: 1000, CVPct: 10, Min: 9000, Max: 11000}); d.RPS != want {
		t.Errorf("direct reused-h1 RPS = %+v, want %+v", d.RPS, want)
	}
	if d.VsDirect == nil || *d.VsDirect != 1 {
		t.Errorf("direct vs itself = %v, want 1", d.VsDirect)
	}
	if d.Resources == nil || !d.Resources.ClientBound || !near(d.Resources.TargetCPUSeconds, 7.8) || !near(d.Resources.TargetCPUPerReqMicros, 60) {
		t.Errorf("direct reused-h1 resources = %+v", d.Resources)
	}

	n := b.find("reused-h3", "nginx", "h3")
	if n == nil || n.NoProto != "no h3" || n.Valid || len(n.Runs) != 0 || n.VsDirect != nil {
		t.Errorf("nginx reused-h3 = %+v, want a 'no h3' cell without runs", n)
	}
	e := b.find("fresh-h2", "envoy", "h2")
	if e.Valid || e.RPS.N != 0 || e.VsDirect != nil || e.Resources != nil {
		t.Errorf("envoy fresh-h2 (its only run invalid) = %+v", e)
	}
	for _, el := range b.EqualLoad {
		// dropped iterations are the result "could not sustain", not an invalid cell
		if el.Target == "caddy" && (!el.Valid || len(el.Invalid) != 0 || el.Overload != "could not sustain 2000 req/s: 37 of 20000 requests not started on time (every VU busy)") {
			t.Errorf("equal-load caddy with drops = %+v, want valid, could not sustain 2000 req/s", el)
		}
	}
}

func TestMeanResources(t *testing.T) {
	t.Parallel()
	got := MeanResources([]*sample.Resources{
		{TargetCPUSeconds: 1, TargetCPUPerReqMicros: 10, RSSPeakMB: 20, RSSMeanMB: 10, ClientCPUUtil: 0.5, ClientCPUs: 2, Samples: 10, TargetProcs: 2},
		{TargetCPUSeconds: 3, TargetCPUPerReqMicros: 30, RSSPeakMB: 40, RSSMeanMB: 20, ClientCPUUtil: 0.95, ClientBound: true, ClientCPUs: 2, Samples: 12, TargetProcs: 3},
	})
	want := sample.Resources{TargetCPUSeconds: 2, TargetCPUPerReqMicros: 20, RSSPeakMB: 40, RSSMeanMB: 15, ClientCPUUtil: 0.725, ClientBound: true, ClientCPUs: 2, Samples: 22, TargetProcs: 3}
	if got == nil || !near(got.ClientCPUUtil, want.ClientCPUUtil) {
		t.Fatalf("MeanResources = %+v", got)
	}
	got.ClientCPUUtil = want.ClientCPUUtil
	if *got != want {
		t.Errorf("MeanResources = %+v, want %+v", *got, want)
	}
	if MeanResources(nil) != nil {
		t.Error("MeanResources(nil) is not nil")
	}
}

// The load-phase CPU pair is averaged only when every run had a load phase: a mean of phases
// and whole lives would be neither.
func TestMeanResourcesLoadPhase(t *testing.T) {
	t.Parallel()
	phase := func(client, target float64) *sample.Resources {
		return &sample.Resources{ClientLoadCPUSeconds: client, TargetLoadCPUSeconds: target}
	}
	tests := []struct {
		name                 string
		runs                 []*sample.Resources
		wantClient, wantTarg float64
	}{
		{"every run had one", []*sample.Resources{phase(1.2, 0.8), phase(1.6, 1.0)}, 1.4, 0.9},
		{"one run too short to have one", []*sample.Resources{phase(1.2, 0.8), phase(0, 0)}, 0, 0},
		{"one run whose target used nothing in it", []*sample.Resources{phase(1.2, 0.8), phase(1.6, 0)}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := MeanResources(tc.runs)
			if !near(m.ClientLoadCPUSeconds, tc.wantClient) || !near(m.TargetLoadCPUSeconds, tc.wantTarg) {
				t.Errorf("load phase = %v, %v; want %v, %v", m.ClientLoadCPUSeconds, m.TargetLoadCPUSeconds, tc.wantClient, tc.wantTarg)
			}
		})
	}
}

// writeResult writes a result file as a scenario's handleSummary does (runner/README.md, "The result file").
func writeResult(t *testing.T, dir, name string, doc map[string]any) {
	t.Helper()
	base := map[string]any{
		"schema": 1, "testid": "20261122-060000", "profile": "smoke", "expected_proto": "HTTP/1.1", "route": "/",
		"url": "https://bench.test:8441/", "failed_requests": 0, "checks": map[string]any{"passes": 100, "fails": 0},
		"protos_seen": map[string]any{"HTTP/1.1": 100}, "dropped_iterations": 0,
		"ttfb_ms": map[string]any{"avg": 1, "min": 0.1, "p50": 0.9, "p90": 2, "p95": 2.5, "p99": 4, "max": 9},
		"extra":   map[string]any{}, "valid": true, "invalid": []string{},
		"k6": map[string]any{"metrics": map[string]any{"http_reqs": map[string]any{"type": "counter", "values": map[string]any{"count": 101}}}},
	}
	for k, v := range doc {
		base[k] = v
	}
	data, err := json.MarshalIndent(base, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func reusedDoc(target string, rps float64, p50 float64) map[string]any {
	return map[string]any{
		"scenario": "reused-h1", "target": target, "mode": "reused", "proto": "h1",
		"duration_s": 10, "duration_from": "DURATION", "requests": rps * 10, "rps": rps, "new_connections": 0,
		"latency_ms": map[string]any{"avg": p50, "min": 0.1, "p50": p50, "p90": p50 * 2, "p95": p50 * 3, "p99": p50 * 4, "max": 20},
		"config":     map[string]any{"target_origin": "https://bench.test:8441", "address": "127.0.0.1", "connections": 32, "duration": "10s", "warmup": "3s"},
	}
}

func TestBuildFromResultFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeResult(t, dir, "reused-h1-direct.json", reusedDoc("direct", 10000, 1))
	// Three runs of one cell, named as a runner with RUNS=3 might: grouped by content.
	writeResult(t, dir, "reused-h1-nginx.json", reusedDoc("nginx", 8000, 2))
	writeResult(t, dir, "run2/reused-h1-nginx.json", reusedDoc("nginx", 6000, 4))
	bad := reusedDoc("nginx", 9999, 1)
	bad["valid"], bad["invalid"] = false, []string{"3 iterations dropped"}
	writeResult(t, dir, "reused-h1-nginx.run3.json", bad)
	writeResult(t, dir, "reused-h3-nginx.json", map[string]any{
		"scenario": "reused-h3", "target": "nginx", "proto": "h3", "valid": false,
		"skipped": "no h3", "skip_reason": "nginx does not serve h3 (it serves h1, h1c, h2)",
	})
	writeResult(t, dir, "sse-h1-nginx.json", map[string]any{
		"scenario": "sse", "target": "nginx", "mode": "probe", "proto": "h1", "route": "/sse", "requests": 5, "rps": nil,
		"latency_ms": map[string]any{"p50": 301, "p99": 302},
		"extra":      map[string]any{"sse_first_event": map[string]any{"p50": 0.45}, "sse_event_gap": map[string]any{"p50": 150}},
		"config":     map[string]any{"samples": 5},
	})
	writeResult(t, dir, "equal-load-h1-nginx.json", map[string]any{
		"scenario": "equal-load-h1", "target": "nginx", "mode": "equal-load", "proto": "h1", "requests": 20000, "rps": 2000,
		"latency_ms": map[string]any{"p50": 0.5, "p99": 2, "p99.9": 7.5}, "config": map[string]any{"rate": 2000},
	})
	// nginx's first run kept k6's web dashboard export beside its result.
	if err := os.WriteFile(filepath.Join(dir, "reused-h1-nginx.dashboard.html"), []byte("<html></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not a result: left alone.
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}

	b, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.TestID != "20261122-060000" || b.Profile != "smoke" {
		t.Errorf("testid %q profile %q", b.TestID, b.Profile)
	}
	n := b.find("reused-h1", "nginx", "h1")
	if n == nil || len(n.Runs) != 3 {
		t.Fatalf("nginx reused-h1 = %+v, want 3 runs", n)
	}
	if n.RPS.N != 2 || n.RPS.Median != 7000 || n.P50.Median != 3 {
		t.Errorf("nginx reused-h1 RPS %+v P50 %+v: want the two valid runs (8000, 6000; p50 2, 4)", n.RPS, n.P50)
	}
	if n.Valid || n.VsDirect != nil {
		t.Errorf("nginx reused-h1 with an invalid run: valid %v, vs direct %v; want invalid, none", n.Valid, n.VsDirect)
	}
	if n.Runs[0].Dashboard != "reused-h1-nginx.dashboard.html" || n.Runs[1].Dashboard != "" {
		t.Errorf("dashboards = %q, %q", n.Runs[0].Dashboard, n.Runs[1].Dashboard)
	}
	if len(n.Invalid) != 1 || !strings.Contains(n.Invalid[0], "3 iterations dropped") {
		t.Errorf("invalid = %q", n.Invalid)
	}
	if h3 := b.find("reused-h3", "nginx", "h3"); h3 == nil || h3.NoProto != "no h3" {
		t.Errorf("reused-h3 nginx = %+v", h3)
	}
	sse := b.find("sse", "nginx", "h1")
	if sse == nil || sse.Mode != "probe" || sse.RPS.N != 0 || sse.Runs[0].Extra["sse_first_event"].P50 != 0.45 {
		t.Errorf("sse = %+v", sse)
	}
	if len(b.EqualLoad) != 1 || b.EqualLoad[0].P999 != 7.5 || b.EqualLoad[0].RateRPS != 2000 || !b.EqualLoad[0].Valid {
		t.Errorf("equal load = %+v", b.EqualLoad)
	}
	if b.Settings["connections"] != "32" || b.Settings["samples"] != "5" || b.Settings["target_origin"] != "" {
		t.Errorf("settings = %v", b.Settings)
	}
	if b.Targets()[0] != "direct" {
		t.Errorf("targets = %v, want direct first", b.Targets())
	}
	if len(b.Cells) != 4 {
		t.Errorf("%d cells, want 4 (direct, nginx, nginx h3, sse)", len(b.Cells))
	}

	// A saved bench.json wins over the files, and round-trips.
	b.Manifest = map[string]any{"cpus": float64(2)}
	if err := b.Save(dir); err != nil {
		t.Fatal(err)
	}
	again, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.CPUs() != 2 || !reflect.DeepEqual(again.Cells, b.Cells) {
		for i := range b.Cells {
			if !reflect.DeepEqual(again.Cells[i], b.Cells[i]) {
				t.Errorf("bench.json did not round-trip:\n%#v\n%#v", b.Cells[i], again.Cells[i])
			}
		}
	}
}

func TestBuildEmptyDir(t *testing.T) {
	t.Parallel()
	if _, err := Build(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no bench.json and no result files") {
		t.Errorf("Build of an empty folder: %v", err)
	}
}

func TestLoadRejectsOtherSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, BenchFile), []byte(`{"schema": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(dir); err == nil || !strings.Contains(err.Error(), "schema 2") {
		t.Errorf("schema 2: %v", err)
	}
}

// TestOneValidRunOfFiveIsNoFigure: a cell whose one run of five passed is invalid — no rank in
// the headline, no chart bar, no vs direct — and its valid run stays listed with its figure.
func TestOneValidRunOfFiveIsNoFigure(t *testing.T) {
	t.Parallel()
	b := New("five", "stable", nil)
	rps := func(v float64) *float64 { return &v }
	add := func(target string, v float64, valid bool, run int) {
		r := &result.Result{
			Schema: 1, Scenario: "reused-h1c", Target: target, Proto: "h1c", Mode: "reused", Route: "/",
			RPS: rps(v), Requests: v * 30, Latency: result.Stats{P50: 1, P99: 2}, Valid: valid,
		}
		if !valid {
			r.Invalid = []string{"31 connections opened for 4 planned: the target did not keep connections alive"}
		}
		b.Add(fmt.Sprintf("reused-h1c-%s.run%d.json", target, run), r, nil)
	}
	for run := 1; run <= 5; run++ {
		add("direct", 10000, true, run)
		add("flaky", 30000, run == 3, run) // the fastest figure, valid once
	}
	b.Finish()
	c := b.find("reused-h1c", "flaky", "h1c")
	if c.Valid || c.VsDirect != nil || len(c.Invalid) != 4 || c.ValidRuns() != 1 || c.RPS.N != 1 {
		t.Errorf("flaky = valid %v, vs direct %v, %d invalid, %d valid runs, rps %+v; want invalid, no vs direct, 4 reasons, its 1 valid run kept",
			c.Valid, c.VsDirect, len(c.Invalid), c.ValidRuns(), c.RPS)
	}
	for _, line := range texts(headline(b)) {
		if strings.Contains(line, "flaky ~") {
			t.Errorf("headline ranks the invalid cell: %s", line)
		}
	}
	ch := throughputChart(b, "reused", b.Targets())
	for i, s := range ch.Series {
		if s == "flaky" && (ch.Values[i][0].Present || ch.Values[i][0].Missing != "invalid") {
			t.Errorf("chart bar of the invalid cell = %+v, want none, marked invalid", ch.Values[i][0])
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NO (4 of 5 runs invalid)", "| reused-h1c | h1c | flaky | 3 | 30,000 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
