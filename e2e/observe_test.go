package e2e

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
)

// streamToInfluxDB starts a real InfluxDB 1.8 for the test (on 8086 moved by the port offset)
// and makes every k6 run of h stream into it with our aggregating output, as `make up
// OBSERVE=1` makes `make k6` and `make bench` do (through `bin/observe env`).
func (h *harness) streamToInfluxDB(t *testing.T) {
	t.Helper()
	bin, err := observe.InstalledBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := "127.0.0.1:" + strconv.Itoa(8086+portOffset(t))
	srv, err := observe.Start(ctx, bin, filepath.Join(t.TempDir(), "influxdb"), addr, observe.DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(10 * time.Second); err != nil {
			t.Errorf("stop InfluxDB: %v", err)
		}
	})
	h.influx = &observe.State{Server: *srv, Bucket: observe.DefaultBucket}
}

// checkInfluxDB reconciles what the output wrote with what k6 measured: for every measured
// cell, the requests of the measured scenario (warm-up excluded) summed from the aggregated
// per-interval points of its target equal the requests in the cell's result, exactly.
func (h *harness) checkInfluxDB(t *testing.T, testid, scenario string, results []*result.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, r := range results {
		q := fmt.Sprintf(`SELECT sum("sum") FROM "http_reqs" WHERE "agg" = 'interval' AND "testid" = '%s' `+
			`AND "target" = '%s' AND "scenario" = '%s'`, testid, r.Target, scenario)
		got, err := observe.Scalar(ctx, h.influx.URL(), h.influx.Bucket, q)
		if err != nil {
			t.Errorf("%s/%s: %v", scenario, r.Target, err)
			continue
		}
		if got != r.Requests || got == 0 {
			t.Errorf("%s/%s: InfluxDB counts %v requests, the result %v\n%s", scenario, r.Target, got, r.Requests, q)
		}
	}
}

// checkResourcesInInfluxDB: the bench wrote one resources point per measured run of the
// matrix, with the figures of bench.json, and every query of the resources dashboard returns
// data for each target of the bench.
func (h *harness) checkResourcesInInfluxDB(t *testing.T, testid string, b *report.Bench, from time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type sums struct {
		runs int
		cpu  float64
	}
	want := map[string]*sums{}
	for _, c := range b.Cells {
		for _, r := range c.Runs {
			// a run too short for /proc's CPU ticks (a probe) has no CPU figure in InfluxDB:
			// not measured, rather than a cost of zero
			if r.Resources == nil || r.Resources.TargetCPUSeconds == 0 {
				continue
			}
			if want[c.Target] == nil {
				want[c.Target] = &sums{}
			}
			want[c.Target].runs++
			want[c.Target].cpu += r.Resources.TargetCPUSeconds
		}
	}
	if len(want) == 0 {
		t.Fatal("bench.json has no run with resources")
	}
	for target, w := range want {
		q := fmt.Sprintf(`SELECT count("target_cpu_s"), sum("target_cpu_s") FROM "%s" WHERE "testid" = '%s' AND "target" = '%s' AND "mode" != 'equal-load'`,
			observe.ResourcesMeasurement, testid, target)
		series, err := observe.Query(ctx, h.influx.URL(), h.influx.Bucket, q)
		if err != nil || len(series) != 1 || len(series[0].Values) != 1 {
			t.Errorf("%s: %v %+v", q, err, series)
			continue
		}
		row := series[0].Values[0]
		n, _ := row[1].(float64)
		cpu, _ := row[2].(float64)
		if int(n) != w.runs || math.Abs(cpu-w.cpu) > 1e-9*max(1, w.cpu) {
			t.Errorf("target %s: InfluxDB has %v resource points summing %v CPU s; bench.json %d runs, %v CPU s", target, n, cpu, w.runs, w.cpu)
		}
	}
	ds, err := observe.LoadDashboards(filepath.Join(h.root, "dashboards", "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range ds {
		if d.File != observe.ResourcesDashboard {
			continue
		}
		found = true
		targets := slices.Sorted(maps.Keys(want))
		_, errs := observe.CheckQueries(ctx, h.influx.URL(), h.influx.Bucket, d, testid, targets, from, time.Now().Add(time.Minute))
		for _, err := range errs {
			t.Error(err)
		}
	}
	if !found {
		t.Errorf("no %s in dashboards/definitions", observe.ResourcesDashboard)
	}
}

// checkRunRatesInInfluxDB: with two runs per cell under one testid, the proxy comparison's
// whole-run req/s is the mean of the runs' rates (each over its own measured scenario), as
// bench.json has it, never their sum.
func (h *harness) checkRunRatesInInfluxDB(t *testing.T, testid string, b *report.Bench, from time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ds, err := observe.LoadDashboards(filepath.Join(h.root, "dashboards", "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	var query string
	for _, d := range ds {
		for _, p := range observe.Flatten(d.Panels) {
			if d.File == "proxy-comparison.json" && p.Title == "Requests per second (whole run)" && len(p.Targets) == 1 {
				query = p.Targets[0].Query
			}
		}
	}
	if query == "" {
		t.Fatal("proxy-comparison.json has no panel \"Requests per second (whole run)\"")
	}
	checked := 0
	for _, c := range b.Cells {
		if c.Mode != "reused" || c.RPS.N < 2 {
			continue
		}
		vals := map[string][]string{"testid": {testid}, "target": {c.Target}, "mode": {"reused"}, "proto": {"HTTP/1.1", "HTTP/2.0"}}
		series, err := observe.Query(ctx, h.influx.URL(), h.influx.Bucket, observe.Substitute(query, vals, from, time.Now().Add(time.Minute), "1s"))
		if err != nil {
			t.Errorf("%s %s: %v", c.Scenario, c.Target, err)
			continue
		}
		got := math.NaN()
		for _, s := range series {
			if s.Tags["scenario"] == c.Scenario && len(s.Values) == 1 {
				got, _ = s.Values[0][len(s.Values[0])-1].(float64)
			}
		}
		// The output's span (first to last sample of the scenario) is a little shorter than
		// DURATION, which k6's rate divides by.
		if !(math.Abs(got-c.RPS.Mean) <= 0.1*c.RPS.Mean) {
			t.Errorf("%s %s: the dashboard's whole-run req/s is %v, bench.json's mean over %d runs %v", c.Scenario, c.Target, got, c.RPS.N, c.RPS.Mean)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no reused cell with two valid runs to check")
	}
}

// checkProbeScenariosInInfluxDB: every probe run of the bench is its own k6 scenario in
// InfluxDB, named with its protocol (json-h1c, json-h2, …): k6's proto tag is HTTP/1.1 for h1
// and h1c alike, and the probes dashboard groups by scenario to keep them apart.
func (h *harness) checkProbeScenariosInInfluxDB(t *testing.T, testid string, b *report.Bench) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range b.Cells {
		if c.Mode != "probe" || c.NoProto != "" || c.Scenario == "ws" {
			continue // ws sessions are no http_reqs
		}
		want := runner.K6Scenario(c.Scenario, c.Proto)
		q := fmt.Sprintf(`SELECT sum("count") FROM "http_req_waiting" WHERE "agg" = 'run' AND "testid" = '%s' AND "target" = '%s' AND "scenario" = '%s'`,
			testid, c.Target, want)
		got, err := observe.Scalar(ctx, h.influx.URL(), h.influx.Bucket, q)
		if err != nil || got <= 0 {
			t.Errorf("probe %s %s: no measured samples under scenario %s in InfluxDB (%v, %v)", c.Target, c.Proto, want, got, err)
		}
	}
}
