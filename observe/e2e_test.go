package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestObserveEndToEnd streams real k6 runs (bin/k6 with our output) against a real upstream
// into a real InfluxDB 1.8 and checks: (a) http_reqs in InfluxDB equals k6's end-of-test
// summary exactly, per target; (b) every query of every dashboard, its variables substituted as
// Grafana would, returns data for every target. Two targets point at the same upstream
// ("direct" and "mirror"), so that per-target separation is tested too.
//
// It needs bin/k6, bin/upstream and influxd: `make test` builds and installs them first.
func TestObserveEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k6, upstream := filepath.Join(root, "bin", "k6"), filepath.Join(root, "bin", "upstream")
	for _, b := range []string{k6, upstream} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%s is missing: run `make test` (or `make build`) first", b)
		}
	}
	if out, err := exec.Command(k6, "version").CombinedOutput(); err != nil || !bytes.Contains(out, []byte(OutputName)) {
		t.Fatalf("bin/k6 has no %s output (rebuild it: make k6-build): %s %v", OutputName, out, err)
	}
	bin, err := InstalledBinary()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()

	const db = "k6e2e"
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
	targetsFile := filepath.Join(tmp, "targets.json")
	targets := []string{"direct", "mirror"}
	tf := map[string]any{
		"hostname": "bench.test", "address": "127.0.0.1", "workers": 1, "upstream_keepalive": 64,
		"upload_limit_bytes": 8388608, "upstream": map[string]int{"h1c": h1c}, "targets": map[string]any{},
	}
	for _, n := range targets {
		tf["targets"].(map[string]any)[n] = map[string]int{"tls": freePort(t), "h1c": h1c}
	}
	data, _ := json.Marshal(tf)
	if err := os.WriteFile(targetsFile, data, 0o644); err != nil {
		t.Fatal(err)
	}

	testid := fmt.Sprintf("observe-e2e-%d", time.Now().Unix())
	runs := []struct {
		scenario string
		env      []string
	}{
		{"reused-h1c", []string{"DURATION=2s", "WARMUP=1s", "CONNECTIONS=4"}},
		{"json", []string{"PROTO=h1c", "SAMPLES=2"}},
		{"stream", []string{"PROTO=h1c", "SAMPLES=2"}},
		{"sse", []string{"PROTO=h1c", "SAMPLES=2"}},
		{"ws", []string{"PROTO=h1c", "SAMPLES=2"}},
	}
	from := time.Now().Add(-time.Minute)
	summaryReqs := map[string]float64{} // target → http_reqs counted by k6's summaries
	measured := map[string]float64{}    // target → reused-h1c's measured requests (the result)
	for _, target := range targets {
		for _, r := range runs {
			summary := filepath.Join(tmp, r.scenario+"-"+target+".json")
			cmd := exec.CommandContext(ctx, k6, "run", "--quiet", "--out", OutputName,
				filepath.Join(root, "scenarios", r.scenario+".js"))
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false",
				"K6_INFLUXDB_ADDR="+influx.URL(), "K6_INFLUXDB_BUCKET="+db, "TARGETS_FILE="+targetsFile,
				"TARGET="+target, "TESTID="+testid, "SUMMARY_JSON="+summary)
			cmd.Env = append(cmd.Env, r.env...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("k6 run %s (target %s): %v\n%s", r.scenario, target, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "none dropped") {
				t.Errorf("k6 run %s (target %s): the output did not report every point written:\n%s",
					r.scenario, target, stderr.String())
			}
			res := readResult(t, summary)
			if !res.Valid {
				t.Errorf("k6 run %s (target %s): invalid result: %v", r.scenario, target, res.Invalid)
			}
			summaryReqs[target] += res.K6.Metrics["http_reqs"].Values["count"]
			if r.scenario == "reused-h1c" {
				measured[target] = res.Requests
			}
		}
	}
	to := time.Now().Add(time.Minute)

	// (a) http_reqs reconcile with k6's summaries exactly, per target, in the per-interval and
	// the whole-run points alike; the measured scenario alone matches the result's requests
	for _, target := range targets {
		for _, agg := range []string{"interval", "run"} {
			got, err := Scalar(ctx, influx.URL(), db, fmt.Sprintf(`SELECT sum("sum") FROM "http_reqs" WHERE "agg" = '%s' `+
				`AND "testid" = '%s' AND "target" = '%s'`, agg, testid, target))
			if err != nil {
				t.Fatal(err)
			}
			if got != summaryReqs[target] || got == 0 {
				t.Errorf("target %s, agg=%s: InfluxDB counts %v http_reqs, k6's summaries %v", target, agg, got, summaryReqs[target])
			}
		}
		got, err := Scalar(ctx, influx.URL(), db, fmt.Sprintf(`SELECT sum("sum") FROM "http_reqs" WHERE "agg" = 'interval' `+
			`AND "testid" = '%s' AND "target" = '%s' AND "scenario" = 'reused-h1c'`, testid, target))
		if err != nil {
			t.Fatal(err)
		}
		if got != measured[target] || got == 0 {
			t.Errorf("target %s: InfluxDB counts %v measured reused-h1c requests, the result %v", target, got, measured[target])
		}
	}

	// (b) every dashboard query returns data for every target
	for _, d := range loadDashboards(t) {
		t.Run(d.file, func(t *testing.T) {
			values := map[string][]string{"testid": {testid}}
			for _, v := range d.Templating.List {
				if v.Name == "testid" {
					q := substitute(v.Query, values, from, to, "1s")
					if vals := tagValues(t, ctx, influx.URL(), db, q); !slices.Contains(vals, testid) {
						t.Errorf("variable testid: %s gives %v, not %s", q, vals, testid)
					}
					continue
				}
				q := substitute(v.Query, values, from, to, "1s")
				values[v.Name] = tagValues(t, ctx, influx.URL(), db, q)
			}
			for name, want := range map[string][]string{"target": targets, "proto": {"HTTP/1.1"}, "mode": {"probe", "reused"}} {
				for _, w := range want {
					if !slices.Contains(values[name], w) {
						t.Errorf("variable %s: %v has no %s", name, values[name], w)
					}
				}
			}
			for _, p := range flatten(d.Panels) {
				for _, q := range p.Targets {
					for _, target := range targets {
						for _, interval := range []string{"1s", "10s"} {
							vals := map[string][]string{}
							for k, v := range values {
								vals[k] = v
							}
							vals["target"] = []string{target}
							query := substitute(q.Query, vals, from, to, interval)
							series, err := Query(ctx, influx.URL(), db, query)
							if err != nil {
								t.Errorf("panel %q query %s: %v", p.Title, q.RefID, err)
								continue
							}
							if !hasData(series) {
								t.Errorf("panel %q query %s, target %s, $__interval %s: no data from\n%s", p.Title, q.RefID,
									target, interval, query)
							}
							for _, s := range series {
								if tt, ok := s.Tags["target"]; ok && tt != target {
									t.Errorf("panel %q query %s: series of target %s when %s is selected", p.Title, q.RefID, tt, target)
								}
							}
						}
					}
				}
			}
		})
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startUpstream runs bin/upstream's cleartext listener alone and stops it at the end.
func startUpstream(t *testing.T, bin string, port int) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "-h1c", addr)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("upstream did not answer on %s:\n%s", addr, log.String())
}

type result struct {
	Valid    bool     `json:"valid"`
	Invalid  []string `json:"invalid"`
	Requests float64  `json:"requests"`
	K6       struct {
		Metrics map[string]struct {
			Values map[string]float64 `json:"values"`
		} `json:"metrics"`
	} `json:"k6"`
}

func readResult(t *testing.T, path string) result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// tagValues runs a SHOW TAG VALUES query and returns the values.
func tagValues(t *testing.T, ctx context.Context, base, db, q string) []string {
	t.Helper()
	series, err := Query(ctx, base, db, q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range series {
		for _, row := range s.Values {
			if v, ok := row[len(row)-1].(string); ok && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// hasData: at least one row with a non-null value besides the time.
func hasData(series []Series) bool {
	for _, s := range series {
		for _, row := range s.Values {
			for i, v := range row {
				if i < len(s.Columns) && s.Columns[i] == "time" {
					continue
				}
				if v != nil {
					return true
				}
			}
		}
	}
	return false
}

var regexMeta = regexp.MustCompile(`[\\^$*+?.()|{}\[\]/]`)

// substitute interpolates a query as Grafana's InfluxDB data source does: $timeFilter,
// $__interval(_ms), and each variable used in a regex (/^$var$/) as its regex-escaped value,
// or (v1|v2|…) when several values (or All) are selected.
func substitute(q string, values map[string][]string, from, to time.Time, interval string) string {
	d, err := time.ParseDuration(interval)
	if err != nil {
		panic(err)
	}
	q = strings.ReplaceAll(q, "$timeFilter", fmt.Sprintf("time >= %dms and time <= %dms", from.UnixMilli(), to.UnixMilli()))
	q = strings.ReplaceAll(q, "$__interval_ms", strconv.FormatInt(d.Milliseconds(), 10))
	q = strings.ReplaceAll(q, "$__interval", interval)
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) }) // $testid before a $test
	for _, n := range names {
		vals := make([]string, 0, len(values[n]))
		for _, v := range values[n] {
			vals = append(vals, regexMeta.ReplaceAllString(v, `\$0`))
		}
		rep := strings.Join(vals, "|")
		if len(vals) > 1 {
			rep = "(" + rep + ")"
		}
		q = strings.ReplaceAll(q, "${"+n+"}", rep)
		q = strings.ReplaceAll(q, "$"+n, rep)
	}
	return q
}
