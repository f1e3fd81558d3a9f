package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
)

// skipShort skips a test that needs what the fast tier (`make check`: go test -short) runs
// without: the components named by needs, which `make test` installs.
func skipShort(t *testing.T, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: not in the fast tier, go test -short", needs)
	}
}

// TestObserveEndToEnd streams real k6 runs (bin/k6 with our output) against a real upstream
// into a real InfluxDB 1.8 and checks: (a) http_reqs in InfluxDB equals k6's end-of-test
// summary exactly, per target; (b) every query of every dashboard, its variables substituted as
// Grafana would, returns data for every target; (d) every failure panel counts a request that
// failed before any response (no proto tag), whatever protocol is selected. Two targets point at the same upstream
// ("direct" and "mirror"), so that per-target separation is tested too.
//
// It needs bin/k6, bin/upstream and influxd: `make test` builds and installs them first.
func TestObserveEndToEnd(t *testing.T) {
	skipShort(t, "influxd")
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
	targets := []string{"direct", "mirror"}
	targetsFile := writeTargets(t, tmp, h1c, targets)

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

	// (b) every dashboard query returns data for every target; the resources and curves
	// dashboards read what `make bench` writes (e2e's TestBenchReport and TestDashboardsInGrafana
	// check them so)
	for _, d := range loadDashboards(t) {
		if d.File == ResourcesDashboard || d.File == CurvesDashboard {
			continue
		}
		t.Run(d.File, func(t *testing.T) {
			values, errs := CheckQueries(ctx, influx.URL(), db, d, testid, targets, from, to)
			for _, err := range errs {
				t.Error(err)
			}
			checkMergedTables(ctx, t, influx.URL(), db, d, values, from, to)
			for name, want := range map[string][]string{"target": targets, "proto": {"HTTP/1.1"}, "mode": {"probe", "reused"}} {
				for _, w := range want {
					if !slices.Contains(values[name], w) {
						t.Errorf("variable %s: %v has no %s", name, values[name], w)
					}
				}
			}
		})
	}

	// (d) A request that failed before any response (a refused connection) carries no proto
	// tag: every failure panel still counts it, whichever protocol is selected. The runs above
	// failed nothing, so these are the only failures in the database.
	at := time.Now().UnixNano()
	var lines strings.Builder
	for _, agg := range []string{"interval", "run"} {
		fmt.Fprintf(&lines, "http_req_failed,agg=%s,expected_response=true,mode=reused,scenario=reused-h1c,target=direct,testid=%s count=7,sum=7 %d\n", agg, testid, at)
	}
	if err := writeLines(ctx, influx.URL(), db, lines.String()); err != nil {
		t.Fatal(err)
	}
	vals := map[string][]string{"testid": {testid}, "target": {"direct"}, "mode": {"reused"}, "proto": {"HTTP/1.1"}}
	failurePanels := 0
	for _, d := range loadDashboards(t) {
		for _, p := range Flatten(d.Panels) {
			for _, q := range p.Targets {
				if !strings.Contains(q.Query, `FROM "http_req_failed"`) {
					continue
				}
				failurePanels++
				series, err := Query(ctx, influx.URL(), db, Substitute(q.Query, vals, from, time.Now().Add(time.Minute), "1s"))
				if err != nil {
					t.Errorf("%s: panel %q: %v", d.File, p.Title, err)
					continue
				}
				if largest(series) <= 0 {
					t.Errorf("%s: panel %q does not count failures without a protocol:\n%s", d.File, p.Title, q.Query)
				}
			}
		}
	}
	if failurePanels == 0 {
		t.Error("no dashboard panel reads http_req_failed")
	}
}

// writeTargets writes a targets.json in dir whose targets all point at the upstream on h1c.
func writeTargets(t *testing.T, dir string, h1c int, targets []string) string {
	t.Helper()
	tf := map[string]any{
		"hostname": "bench.test", "address": "127.0.0.1", "workers": 1, "upstream_keepalive": 64,
		"upload_limit_bytes": 8388608, "upstream": map[string]int{"h1c": h1c}, "targets": map[string]any{},
	}
	for _, n := range targets {
		tf["targets"].(map[string]any)[n] = map[string]int{"tls": freePort(t), "h1c": h1c}
	}
	data, _ := json.Marshal(tf)
	path := filepath.Join(dir, "targets.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeLines writes line-protocol points to db (InfluxDB 1.x's /write, nanosecond times).
func writeLines(ctx context.Context, base, db, lines string) error {
	u := base + "/write?precision=ns&db=" + url.QueryEscape(db)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(lines))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("write: %s: %s", resp.Status, body)
	}
	return nil
}

// largest is the largest number in any series' values (time columns aside); 0 when none.
func largest(series []Series) float64 {
	m := 0.0
	for _, s := range series {
		for _, row := range s.Values {
			for i, v := range row {
				if f, ok := v.(float64); ok && (i >= len(s.Columns) || s.Columns[i] != "time") {
					m = max(m, f)
				}
			}
		}
	}
	return m
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

// judgedResult is a result file as this test reads it: the verdict, and k6's own counts.
type judgedResult struct {
	Valid    bool     `json:"valid"`
	Invalid  []string `json:"invalid"`
	Requests float64  `json:"requests"`
	K6       struct {
		Metrics map[string]struct {
			Values map[string]float64 `json:"values"`
		} `json:"metrics"`
	} `json:"k6"`
}

func readResult(t *testing.T, path string) judgedResult {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r judgedResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// the script counts, the verdict judges: as every reader of a result does
	judged, err := result.LoadResult(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Valid, r.Invalid = judged.Valid, judged.Invalid
	return r
}
