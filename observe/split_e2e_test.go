package observe

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestObserveSplitRun runs reused-h1c as two k6 instances on execution segments (as make k6
// SEGMENTS=2 starts them: a segment and the sequence each, SEGMENTS=2 for the scripts), both
// streaming into a real InfluxDB, and reads the run back through the dashboards' own queries:
// the instances are tagged instance_id 1 and 2 by the output (k6 hands it the segment), the
// proxy comparison's requests are the two results' together, its req/s theirs added, its p99
// (from the merged cdf rows) lies between the instances' own p99s, and every query of the live
// and comparison dashboards returns data for the split run.
//
// It needs bin/k6, bin/upstream and influxd, as TestObserveEndToEnd.
func TestObserveSplitRun(t *testing.T) {
	skipShort(t, "influxd")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k6, upstream := filepath.Join(root, "bin", "k6"), filepath.Join(root, "bin", "upstream")
	for _, b := range []string{k6, upstream} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%s is missing: run `make test` (or `make build`) first", b)
		}
	}
	bin, err := InstalledBinary()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	const db = "k6split"
	influx, err := Start(ctx, bin, filepath.Join(tmp, "influxdb"), "127.0.0.1:"+strconv.Itoa(freePort(t)), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := influx.Stop(10 * time.Second); err != nil {
			t.Error(err)
		}
	})
	h1c := freePort(t)
	startUpstream(t, upstream, h1c)
	targetsFile := writeTargets(t, tmp, h1c, []string{"direct"})

	testid := fmt.Sprintf("observe-split-%d", time.Now().Unix())
	summaryOf := func(i int) string { return filepath.Join(tmp, fmt.Sprintf("instance-%d.json", i)) }
	from := time.Now().Add(-time.Minute)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			summary := summaryOf(i)
			segment := []string{"0:1/2", "1/2:1"}[i]
			// --address: two k6 at once can't both have the REST API on 6565
			cmd := exec.CommandContext(ctx, k6, "run", "--quiet", "--out", OutputName, "--address", "127.0.0.1:0",
				"--execution-segment", segment, "--execution-segment-sequence", "0,1/2,1",
				filepath.Join(root, "scenarios", "reused-h1c.js"))
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false",
				"K6_INFLUXDB_ADDR="+influx.URL(), "K6_INFLUXDB_BUCKET="+db, "TARGETS_FILE="+targetsFile,
				"TARGET=direct", "TESTID="+testid, "SUMMARY_JSON="+summary, "SEGMENTS=2",
				"DURATION=2s", "WARMUP=1s", "CONNECTIONS=4")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("k6 run segment %s: %w\n%s", segment, err, out.String())
				return
			}
			if !strings.Contains(out.String(), "none dropped") {
				errs[i] = fmt.Errorf("segment %s: the output did not report every point written:\n%s", segment, out.String())
			}
		}()
	}
	wg.Wait()
	results := make([]judgedResult, 2)
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		if results[i] = readResult(t, summaryOf(i)); !results[i].Valid {
			t.Errorf("instance %d: invalid result: %v", i+1, results[i].Invalid)
		}
	}
	to := time.Now().Add(time.Minute)

	ids, err := tagValues(ctx, influx.URL(), db, fmt.Sprintf(`SHOW TAG VALUES FROM "http_reqs" WITH KEY = "instance_id" WHERE "testid" = '%s'`, testid))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"1", "2"}) {
		t.Errorf("instance_id values %v, want 1 and 2", ids)
	}

	query := func(file, title, ref string) []Series {
		t.Helper()
		for _, d := range loadDashboards(t) {
			for _, p := range Flatten(d.Panels) {
				for _, q := range p.Targets {
					if d.File == file && p.Title == title && q.RefID == ref {
						vals := map[string][]string{"testid": {testid}, "target": {"direct"}, "mode": {"reused"}, "proto": {"HTTP/1.1"}}
						series, err := Query(ctx, influx.URL(), db, Substitute(q.Query, vals, from, to, "1s"))
						if err != nil {
							t.Fatal(err)
						}
						return series
					}
				}
			}
		}
		t.Fatalf("%s has no panel %q with query %s", file, title, ref)
		return nil
	}
	cell := func(series []Series, column string) float64 {
		t.Helper()
		for _, s := range series {
			if s.Tags["scenario"] != "reused-h1c" {
				continue
			}
			for i, c := range s.Columns {
				if c == column && len(s.Values) == 1 {
					if f, ok := s.Values[0][i].(float64); ok {
						return f
					}
				}
			}
		}
		t.Fatalf("no %s of scenario reused-h1c in %+v", column, series)
		return 0
	}
	const table = "Side by side: whole measured run"
	a := query("proxy-comparison.json", table, "A")
	if got, want := cell(a, "requests"), results[0].Requests+results[1].Requests; got != want || want == 0 {
		t.Errorf("the comparison's requests: %v, the instances' results %v + %v", got, results[0].Requests, results[1].Requests)
	}
	// each instance's rate over its own span, added: within 10% of the requests over DURATION
	if got, want := cell(a, "req/s"), (results[0].Requests+results[1].Requests)/2; math.Abs(got-want) > 0.1*want {
		t.Errorf("the comparison's req/s: %v, the instances' requests over 2 s: %v", got, want)
	}

	// the merged p99 lies between the instances' own (a mixture's quantile does), give or take
	// the cdf rows' 6.25% and the histograms' 0.2%
	own, err := Query(ctx, influx.URL(), db, fmt.Sprintf(`SELECT "p99" FROM "http_req_duration" WHERE "agg" = 'run' `+
		`AND "expected_response" = 'true' AND "testid" = '%s' AND "scenario" = 'reused-h1c' GROUP BY "instance_id"`, testid))
	if err != nil || len(own) != 2 {
		t.Fatalf("each instance's p99: %v %+v", err, own)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range own {
		v := s.Values[0][1].(float64)
		lo, hi = min(lo, v), max(hi, v)
	}
	p99 := cell(query("proxy-comparison.json", table, "E"), "p99 ms")
	if p99 < lo*(1-0.065) || p99 > hi*(1+0.065) {
		t.Errorf("the comparison's merged p99 %v is outside the instances' [%v, %v]", p99, lo, hi)
	}
	t.Logf("split run: %v + %v requests, instances' p99 %.3f and %.3f ms, merged %.3f ms", results[0].Requests, results[1].Requests, lo, hi, p99)

	for _, d := range loadDashboards(t) {
		if d.File != "live-run.json" && d.File != "proxy-comparison.json" {
			continue // probes and resources: no probe and no bench in this run
		}
		_, errs := CheckQueries(ctx, influx.URL(), db, d, testid, []string{"direct"}, from, to)
		for _, err := range errs {
			t.Error(err)
		}
	}
}
