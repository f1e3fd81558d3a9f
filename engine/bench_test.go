package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// fakeTargets is a stack whose processes die, stop and restart as a test says.
type fakeTargets struct {
	pids map[string]int
	// dies: after how many runs of its own each target's process is found dead
	dies map[string]int
	// restartErr: what starting each target again says; nil starts it with the next pid
	restartErr map[string]error
	runs       map[string]int
	restarts   []string
}

func (f *fakeTargets) Check(name string, pid int) (string, bool) {
	if n, ok := f.dies[name]; ok && f.runs[name] >= n && pid == f.pids[name] {
		return "exited during the run", true
	}
	return "", false
}

func (f *fakeTargets) Restart(_ context.Context, name string) (int, error) {
	f.restarts = append(f.restarts, name)
	if err := f.restartErr[name]; err != nil {
		return 0, err
	}
	f.pids[name] += 1000
	delete(f.dies, name)
	return f.pids[name], nil
}

func (f *fakeTargets) Log(name string) (string, string) {
	return "/run/" + name + "/" + name + ".log", "listening\nsegmentation fault"
}

// fakeRunner is the real runner's recording of skipped cells and result paths, with k6 replaced
// by a result file written at once: every run valid, at a rate per target.
type fakeRunner struct {
	*runner.Runner
	targets *fakeTargets
	rps     map[string]float64
	ran     []string // scenario/target/run, in order
	pids    []int    // the target pid each run was sampled with
	ups     []int    // and the upstream's
	envs    []string // each run's own environment, space-separated
	// after is called after each run, with how many have run: a signal, say.
	after func(n int)
}

func (f *fakeRunner) Sampled(_ context.Context, testid string, j runner.Job, target, upstream int) (*result.Result, *sample.Resources) {
	f.ran = append(f.ran, fmt.Sprintf("%s/%s/%d", j.Scenario, j.Target, max(j.Run, 1)))
	f.pids = append(f.pids, target)
	f.ups = append(f.ups, upstream)
	f.envs = append(f.envs, strings.Join(j.Env, " "))
	f.targets.runs[j.Target]++
	rps := f.rps[j.Target]
	res := &result.Result{
		Schema: 1, TestID: testid, Scenario: j.Scenario, Target: j.Target, Mode: j.Mode(),
		Proto: j.Requires(), Profile: "smoke", DurationS: 1, Requests: rps, RPS: &rps,
		ProtosSeen: map[string]float64{}, Extra: map[string]result.Stats{}, Valid: true, Invalid: []string{},
	}
	// what the sweeps' scripts and the runner's samples add: an idle run's cost, a body's rate
	switch {
	case j.Mode() == "idle":
		res.IdleCost = result.NewIdleCost(20, 20+rps/1000, 100, 0.1, 10, 20)
	case j.Body != nil:
		body := *j.Body
		mb := rps * body.Bytes / 1e6
		body.MBPerS = &mb
		res.Body = &body
	}
	path, _ := f.ResultPath(testid, j)
	data, _ := json.Marshal(res)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		res.Err = err.Error()
	} else if err := os.WriteFile(path, data, 0o644); err != nil {
		res.Err = err.Error()
	}
	if f.after != nil {
		f.after(len(f.ran))
	}
	return res, nil
}

// newTestBench is a bench of direct, nginx and caddy on a fake stack, godoxy missing.
func newTestBench(t *testing.T) (*Bench, *fakeTargets, *fakeRunner, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	ft := &fakeTargets{
		pids: map[string]int{stack.Direct: 1, "nginx": 2, "caddy": 3},
		dies: map[string]int{}, restartErr: map[string]error{}, runs: map[string]int{},
	}
	fr := &fakeRunner{
		Runner:  &runner.Runner{ResultsDir: dir, Profile: "smoke"},
		targets: ft, rps: map[string]float64{stack.Direct: 9000, "nginx": 6000, "caddy": 3000},
	}
	var stderr bytes.Buffer
	b := &Bench{
		TestID: "t1", Dir: filepath.Join(dir, "t1"), Profile: "smoke",
		Targets: ft, Runner: fr, PIDs: map[string]int{},
		Served: Served{
			Protocols: map[string][]string{stack.Direct: {"h1c", "h2"}, "nginx": {"h1c", "h2"}, "caddy": {"h1c", "h2"}},
			Missing:   map[string]string{"godoxy": "install failed: no release"},
		},
		Stdout: &bytes.Buffer{}, Stderr: &stderr,
	}
	for n, p := range ft.pids {
		b.PIDs[n] = p
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b.Begin(map[string]any{})
	return b, ft, fr, &stderr
}

var testPlan = Plan{Targets: []string{stack.Direct, "nginx", "caddy", "godoxy"}, Protos: []string{"h1c"}, Modes: []string{"reused"}, Runs: 2}

// savedRuns counts the runs bench.json holds, and the cells it holds as not run.
func savedRuns(t *testing.T, dir string) int {
	t.Helper()
	saved, err := report.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range saved.Cells {
		n += max(len(c.Runs), 1)
	}
	for range saved.EqualLoad {
		n++
	}
	return n
}

func TestBenchRunsThePlan(t *testing.T) {
	b, _, fr, _ := newTestBench(t)
	b.Run(context.Background(), testPlan)
	want := []string{
		"reused-h1c/direct/1", "reused-h1c/nginx/1", "reused-h1c/caddy/1",
		"reused-h1c/direct/2", "reused-h1c/nginx/2", "reused-h1c/caddy/2",
		"equal-load/direct/1", "equal-load/nginx/1", "equal-load/caddy/1",
		"equal-load/direct/2", "equal-load/nginx/2", "equal-load/caddy/2",
	}
	if got := strings.Join(fr.ran, " "); got != strings.Join(want, " ") {
		t.Errorf("ran %s\nwant %s", got, strings.Join(want, " "))
	}
	if !b.Complete() {
		t.Error("a bench whose every run ended is not complete")
	}
	for i, up := range fr.ups {
		if up != 1 || fr.pids[i] != map[string]int{"direct": 1, "nginx": 2, "caddy": 3}[strings.Split(fr.ran[i], "/")[1]] {
			t.Errorf("%s sampled pids %d (upstream %d), want its target's and direct's", fr.ran[i], fr.pids[i], up)
		}
	}
	if err := b.Err(); err != nil {
		t.Errorf("Err() = %v, want nil: every run valid, godoxy not run", err)
	}
	// godoxy never started: one row that says why, not one per run
	var skipped []string
	for _, r := range b.Results {
		if r.Skipped != "" {
			skipped = append(skipped, r.Target+": "+r.SkipReason)
		}
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "godoxy: install failed") {
		t.Errorf("not run: %q, want godoxy's one row saying install failed", skipped)
	}
	if n := savedRuns(t, b.Dir); n != len(b.Results) {
		t.Errorf("bench.json holds %d runs, want every one of %d", n, len(b.Results))
	}
}

func TestBenchTargetDiesMidRun(t *testing.T) {
	tests := []struct {
		name        string
		restartErr  error
		wantRan     int    // runs of nginx
		wantPIDs    []int  // nginx's runs' pids
		wantMissing string // a part of nginx's missing reason after the bench
	}{
		{name: "starts again", wantRan: 4, wantPIDs: []int{2, 1002, 1002, 1002}},
		{name: "will not start", restartErr: errors.New("port 30080 in use"), wantRan: 1, wantPIDs: []int{2}, wantMissing: "did not start again: port 30080 in use"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, ft, fr, stderr := newTestBench(t)
			ft.dies["nginx"] = 1
			ft.restartErr["nginx"] = tc.restartErr
			b.Run(context.Background(), testPlan)
			var ran []int
			for i, r := range fr.ran {
				if strings.Contains(r, "/nginx/") {
					ran = append(ran, fr.pids[i])
				}
			}
			if fmt.Sprint(ran) != fmt.Sprint(tc.wantPIDs) {
				t.Errorf("nginx ran with pids %v, want %v", ran, tc.wantPIDs)
			}
			first := b.Results[2] // godoxy's row, direct's run 1, then nginx's
			if first.Target != "nginx" || first.Valid || !strings.Contains(strings.Join(first.Invalid, " "), "nginx (pid 2) exited during the run; the end of /run/nginx/nginx.log: listening | segmentation fault") {
				t.Errorf("the run nginx died in: %s valid=%v invalid=%q, want invalid with the end of its log", first.Target, first.Valid, first.Invalid)
			}
			if got := b.Served.Missing["nginx"]; !strings.Contains(got, tc.wantMissing) || (tc.wantMissing == "") != (got == "") {
				t.Errorf("nginx missing %q, want %q", got, tc.wantMissing)
			}
			if err := b.Err(); err == nil || !strings.Contains(err.Error(), "cells invalid") {
				t.Errorf("Err() = %v, want the invalid cell counted", err)
			}
			if !b.Complete() || !strings.Contains(stderr.String(), "bench: nginx") {
				t.Errorf("complete %v; stderr says nothing of nginx:\n%s", b.Complete(), stderr)
			}
			if n := savedRuns(t, b.Dir); n != len(b.Results) {
				t.Errorf("bench.json holds %d runs, want %d", n, len(b.Results))
			}
		})
	}
}

func TestBenchUpstreamDiesMidRun(t *testing.T) {
	b, ft, fr, _ := newTestBench(t)
	ft.dies[stack.Direct] = 2
	b.Run(context.Background(), testPlan)
	// direct's second run is the 4th: it dies there, and nothing runs after it
	if len(fr.ran) != 4 {
		t.Errorf("ran %v, want the bench stopped after direct's second run", fr.ran)
	}
	err := b.Err()
	if err == nil || !strings.Contains(err.Error(), "the upstream (direct, pid 1) exited during the run (reused-h1c direct)") {
		t.Errorf("Err() = %v, want the upstream's death", err)
	}
	if b.Complete() || len(ft.restarts) != 0 {
		t.Errorf("complete %v, restarts %v: want neither after the upstream died", b.Complete(), ft.restarts)
	}
}

func TestBenchInterruptedBetweenCells(t *testing.T) {
	b, _, fr, _ := newTestBench(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fr.after = func(n int) {
		if n == 2 {
			cancel() // Ctrl-C once nginx's first run ended
		}
	}
	b.Run(ctx, testPlan)
	if len(fr.ran) != 2 {
		t.Errorf("ran %v, want nothing after the signal", fr.ran)
	}
	if b.Complete() {
		t.Error("an interrupted bench is complete")
	}
	err := b.Err()
	if err == nil || !strings.Contains(err.Error(), "interrupted at run 2 of 12") || !strings.Contains(err.Error(), "make report ID=t1") {
		t.Errorf("Err() = %v, want where it stopped and how to rebuild the report", err)
	}
	if err := b.WriteReport(); err != nil {
		t.Fatal(err)
	}
	// the two runs and godoxy's row are saved, with the report beside them
	if n := savedRuns(t, b.Dir); n != 3 {
		t.Errorf("bench.json holds %d runs, want 3", n)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "report.html")); err != nil {
		t.Errorf("no report after the signal: %v", err)
	}
}

func TestBenchDiskFull(t *testing.T) {
	b, _, fr, stderr := newTestBench(t)
	saves := 0
	b.Save = func(*report.Bench) error {
		saves++
		return &os.PathError{Op: "write", Path: filepath.Join(b.Dir, report.BenchFile), Err: syscall.ENOSPC}
	}
	b.Run(context.Background(), testPlan)
	if len(fr.ran) != 12 || !b.Complete() {
		t.Errorf("ran %d runs, complete %v: a full disk must not stop the bench", len(fr.ran), b.Complete())
	}
	if got := strings.Count(stderr.String(), "no space left on device: the runs are saved at the end only"); got != 1 {
		t.Errorf("the full disk said %d times, want once:\n%s", got, stderr)
	}
	err := b.WriteReport()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WriteReport() = %v, want the full disk", err)
	}
	// what was measured is still whole in memory, and printed
	if len(b.Results) != 13 || saves != 14 {
		t.Errorf("%d results, %d saves, want 13 results (12 runs and godoxy's row) and a save after each and at the end", len(b.Results), saves)
	}
	if out := b.Stdout.(*bytes.Buffer).String(); !strings.Contains(out, "reused-h1c") {
		t.Errorf("the tables were not printed before the save failed:\n%s", out)
	}
}

func TestServedNotRun(t *testing.T) {
	sv := Served{
		Protocols: map[string][]string{"pingora": {"h1", "h1c", "h2"}},
		Missing:   map[string]string{"godoxy": "not installed: GODOXY_BIN"},
	}
	r := &runner.Runner{ResultsDir: t.TempDir()}
	tests := []struct {
		job  runner.Job
		want string // the row's label; "" when it runs
	}{
		{runner.Job{Scenario: "reused-h2", Target: "pingora"}, ""},
		{runner.Job{Scenario: "reused-h3", Target: "pingora"}, "no h3"},
		{runner.Job{Scenario: "json", Target: "pingora", Proto: "h3"}, "no h3"},
		{runner.Job{Scenario: "reused-h2", Target: "godoxy"}, stack.LabelNotInstalled},
	}
	for _, tc := range tests {
		res := sv.NotRun(r, "t", tc.job)
		got := ""
		if res != nil {
			got = res.Skipped
		}
		if got != tc.want || sv.Can(tc.job) != (tc.want == "") {
			t.Errorf("%+v: not run %q, can %v; want %q", tc.job, got, sv.Can(tc.job), tc.want)
		}
	}
}

// fakePoints records the capacity steps and sweep points written beside k6's points; err
// fails every write.
type fakePoints struct {
	steps  []observe.CapacityStep
	sweeps []observe.SweepPoint
	err    error
}

func (f *fakePoints) WriteSweep(_ context.Context, p observe.SweepPoint, _ time.Time) error {
	f.sweeps = append(f.sweeps, p)
	return f.err
}

func (f *fakePoints) Write(context.Context, *result.Result, *sample.Resources, time.Time) error {
	return f.err
}

func (f *fakePoints) WriteStep(_ context.Context, s observe.CapacityStep, _ time.Time) error {
	f.steps = append(f.steps, s)
	return f.err
}

func TestCapacityStepsArePoints(t *testing.T) {
	plan := Plan{
		Targets: []string{stack.Direct, "nginx"}, Protos: []string{"h1c"}, Modes: []string{"reused", "capacity"}, Runs: 1,
		CapacityProtos: []string{"h1c"}, CapacityP99: 10, Connections: 32,
	}
	b, _, fr, _ := newTestBench(t)
	fr.rps["nginx"] = 16000 // equal load at 8,000 req/s: steps above 3,200 and below
	fp := &fakePoints{}
	b.Points = fp
	b.Run(context.Background(), plan)
	var want []observe.CapacityStep
	for _, c := range b.Report.Capacity {
		for _, st := range c.Steps {
			want = append(want, observe.CapacityStep{TestID: "t1", Target: c.Target, Proto: "h1c", GoalMS: 10, OfferedRPS: st.Rate, P99MS: st.P99, Held: st.Held})
		}
	}
	if len(want) == 0 || !reflect.DeepEqual(fp.steps, want) {
		t.Errorf("capacity points:\n got %+v\nwant one per step of the report's searches %+v", fp.steps, want)
	}
	// every step ran with the pool its rate needs: above 3,200 req/s, more than the plan's 32
	widened := 0
	for i, ran := range fr.ran {
		if !strings.Contains(fr.envs[i], "WARMUP="+capacityWarmup) {
			continue // not a step of its own: the matrix, the equal-load pass
		}
		var rate int
		if _, err := fmt.Sscanf(fr.envs[i], "RATE=%d", &rate); err != nil {
			t.Fatalf("%s: env %q has no rate first: %v", ran, fr.envs[i], err)
		}
		want := capacityConnections("h1c", rate, 10, 32)
		has := strings.Contains(fr.envs[i], fmt.Sprintf("CONNECTIONS=%d", want))
		if has != (want > 32) {
			t.Errorf("%s: env %q, want CONNECTIONS=%d only above the plan's 32", ran, fr.envs[i], want)
		}
		if has {
			widened++
		}
	}
	if widened == 0 || widened == len(fp.steps) {
		t.Errorf("%d of %d steps widened the pool: the test wants steps on both sides of 3,200 req/s", widened, len(fp.steps))
	}

	// a database that fails is said once, and the bench goes on without it
	b, _, _, stderr := newTestBench(t)
	fp = &fakePoints{err: errors.New("write a capacity step to InfluxDB: 503 Service Unavailable")}
	b.Points = fp
	b.Run(context.Background(), plan)
	if n := strings.Count(stderr.String(), "503 Service Unavailable"); n != 1 || len(fp.steps) != 1 || len(b.Report.Capacity) != 2 {
		t.Errorf("failing database: said %d times, %d writes tried, %d searches; want said once, one write tried, both searched:\n%s", n, len(fp.steps), len(b.Report.Capacity), stderr)
	}
}

func TestCapacityConnections(t *testing.T) {
	for _, tc := range []struct {
		proto       string
		rate        int
		goalMS      float64
		connections int
		want        int
	}{
		{"h1c", 1000, 10, 32, 32},   // 10 in flight at the goal: the plan's pool holds them
		{"h1c", 2355, 10, 4, 24},    // each connection's requests due every 10.2 ms
		{"h1", 4323, 10, 32, 44},    // 43.23 rounded up
		{"h1c", 10000, 0.5, 32, 32}, // a tight goal needs no more
		{"h2", 20000, 10, 32, 32},   // streams: the plan's connections
	} {
		if got := capacityConnections(tc.proto, tc.rate, tc.goalMS, tc.connections); got != tc.want {
			t.Errorf("capacityConnections(%s, %d req/s, %g ms, %d) = %d, want %d", tc.proto, tc.rate, tc.goalMS, tc.connections, got, tc.want)
		}
	}
}
