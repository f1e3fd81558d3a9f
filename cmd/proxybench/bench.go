package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// benchCalibrateSeconds is how long each client runs in the bench's own calibration: short, as
// it runs at every bench; `make calibrate` is the long one.
const benchCalibrateSeconds = 3

// calibrate measures the client's ceiling before the matrix: k6 and the native peers on the
// same short load against direct (the bench profile's connections and h2 streams, unless
// CONNECTIONS and STREAMS say otherwise), for each protocol of the bench that has a peer. Its
// k6 results go to a folder of their own (<testid>-calibrate), out of the bench's cells.
func (b *bench) calibrate(ctx context.Context, f *benchFlags) []*runner.Calibration {
	if err := peersInstalled(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: no client calibration: %v\n", err)
		return nil
	}
	conns, streams := f.load.Connections, f.load.Streams
	if n, err := strconv.Atoi(os.Getenv("CONNECTIONS")); err == nil {
		conns = n
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMS")); err == nil {
		streams = n
	}
	var rows []*runner.Calibration
	for _, p := range calibrateProtos {
		if !slices.Contains(f.protos, p) || !slices.Contains(b.served.protocols[stack.Direct], p) || ctx.Err() != nil {
			continue
		}
		load := calibrationLoad(b.stack.Config, stack.Direct, p, conns, streams, f.calibrate)
		j := runner.Job{Target: stack.Direct, Proto: p, Run: 1, Env: load.K6Env()}
		// the client the matrix runs with: its ceiling is the one the report's figures have
		rows = append(rows, b.runner.Calibrate(ctx, b.testid+"-calibrate", j, load, b.pids[stack.Direct], []string{f.client})...)
	}
	runner.SetVsPeer(rows)
	return rows
}

// benchJob is one k6 run of the matrix.
type benchJob struct {
	job  runner.Job
	runs int // of its cell
}

// plan is the matrix, in order: throughput (each RUNS times) then the probes (once: a probe
// repeats SAMPLES times within its run). A scenario's runs are interleaved across the targets
// (A B C A B C, never A A B B C C), so that a drift of the machine over minutes (a neighbour's
// load, heat, the page cache) spreads over every target instead of landing on one.
func (f *benchFlags) plan(targets []string) []benchJob {
	var jobs []benchJob
	for _, sc := range runner.Throughput {
		if !slices.Contains(f.modes, runner.ModeOf(sc)) || !slices.Contains(f.protos, runner.Requires(runner.Job{Scenario: sc})) {
			continue
		}
		for run := 1; run <= f.runs; run++ {
			for _, t := range targets {
				jobs = append(jobs, benchJob{job: runner.Job{Scenario: sc, Target: t, Run: run}, runs: f.runs})
			}
		}
	}
	if slices.Contains(f.modes, "probe") {
		for _, p := range runner.Probes {
			for _, t := range targets {
				for _, proto := range p.Protos {
					if slices.Contains(f.protos, proto) {
						jobs = append(jobs, benchJob{job: runner.Job{Scenario: p.Scenario, Target: t, Proto: proto}, runs: 1})
					}
				}
			}
		}
	}
	return jobs
}

// bench is one `proxybench bench`: the runner, what is up, and the saved run being built.
type bench struct {
	stack   *stack.Stack
	runner  *runner.Runner
	testid  string
	dir     string
	served  served
	pids    map[string]int
	report  *report.Bench
	dash    bool
	results []*runner.Result // every run, for the exit status
	tables  []*runner.Result // run 1 of each cell, for the tables
	// influx, when k6 streams into InfluxDB, gets each run's resources beside k6's points.
	influx *observe.ResourceWriter
	// restart: every run on a freshly started process. Its first too: restarting the upstream
	// (direct's runs) breaks the proxies' pooled connections to it, which no proxy's run may meet.
	restart bool
	// progress: runs started so far, of total (the matrix and the equal-load pass), since t0
	done, total int
	t0          time.Time
	// fatal ends the bench after the run in progress: the upstream died (checkAlive).
	fatal error
	// finished: every run ended before any signal came
	finished   bool
	saveWarned bool // checkpoint's
}

// runnable tells whether a job can run, else records it as not run (its target lacks the
// protocol, or is not installed) and returns false.
func (b *bench) runnable(j runner.Job) bool {
	var res *runner.Result
	if how := b.served.missing[j.Target]; how != "" {
		if j.Run > 1 {
			return false
		}
		res = b.runner.SkipMissing(b.testid, j, how)
	} else if need := runner.Requires(j); !slices.Contains(b.served.protocols[j.Target], need) {
		if j.Run > 1 {
			return false
		}
		res = b.runner.Skip(b.testid, j, b.served.protocols[j.Target])
	} else {
		return true
	}
	b.add(j, res, nil) // one "not run" row per cell, whatever RUNS
	return false
}

// run runs one job with its resources sampled, and adds it to the bench.
func (b *bench) run(ctx context.Context, j runner.Job) *runner.Result {
	if b.restart {
		r, err := b.stack.Restart(ctx, j.Target)
		if err != nil {
			// not measured: an invalid run that says why, and the target is down from now on
			res := runner.Failed(b.testid, j, err)
			b.add(j, res, nil)
			return res
		}
		b.pids[j.Target] = r.PID
	}
	if b.dash {
		if path, err := b.runner.ResultPath(b.testid, j); err == nil {
			// No port (no server to open); a 1 s period, since k6 exports nothing from a run
			// shorter than two periods, and a probe takes a few seconds.
			j.Env = append(j.Env, "K6_WEB_DASHBOARD=true", "K6_WEB_DASHBOARD_PORT=-1", "K6_WEB_DASHBOARD_PERIOD=1s",
				"K6_WEB_DASHBOARD_EXPORT="+report.DashboardFile(path))
		}
	}
	b.runner.UpstreamPID = b.pids[stack.Direct]
	res, rs := b.runner.RunSampled(ctx, b.testid, j, b.pids[j.Target])
	if ctx.Err() == nil {
		b.checkAlive(ctx, j, res)
	}
	b.add(j, res, rs)
	return res
}

// checkAlive is what follows a run whose upstream or target died, was stopped (SIGSTOP) or,
// for the target, held the run past RUN_TIMEOUT: the run is invalid, with the end of that
// one's log; a proxy is started again (verified) for its next runs, or left out of them if it
// will not start; the upstream's death or stop ends the bench (b.fatal), since every other
// figure would be measured against nothing.
func (b *bench) checkAlive(ctx context.Context, j runner.Job, res *runner.Result) {
	// the upstream first: a proxy's run cut off because the upstream hung is the upstream's fault
	for _, n := range slices.Compact([]string{stack.Direct, j.Target}) {
		p := stack.Process{PID: b.pids[n]}
		var what string
		gone := true // dead or stopped, not only slow
		switch {
		case p.PID == 0:
			continue
		case !p.Alive():
			what = "exited during the run"
		case p.Stopped():
			what = "was stopped (SIGSTOP or a tracer: state T) during the run"
		case res.TimedOut && n == j.Target:
			what, gone = "did not let the run end within RUN_TIMEOUT", false
		default:
			continue
		}
		log := filepath.Join(b.stack.RunDir, n, n+".log")
		tail, _ := os.ReadFile(log)
		why := fmt.Sprintf("%s (pid %d) %s; the end of %s: %s", n, p.PID, what, log,
			strings.ReplaceAll(stack.LastLines(string(tail), 5), "\n", " | "))
		path, _ := b.runner.ResultPath(b.testid, j)
		if err := runner.MarkInvalid(res, path, why); err != nil {
			fmt.Fprintf(os.Stderr, "warning: %s: %v\n", path, err)
		}
		fmt.Fprintf(os.Stderr, "bench: %s\n", why)
		if n == stack.Direct && gone {
			b.fatal = fmt.Errorf("the upstream (direct, pid %d) %s (%s %s): the bench stopped, as no figure means anything without it (its log: %s)", p.PID, what, j.Scenario, j.Target, log)
			return
		}
		r, err := b.stack.Restart(ctx, n)
		if err != nil {
			b.served.missing[n] = stack.LabelNotVerified + ": " + what + " and did not start again: " + stack.FirstLine(err.Error())
			fmt.Fprintf(os.Stderr, "bench: %s is left out of its other runs: %v\n", n, err)
			continue
		}
		b.pids[n] = r.PID
		fmt.Fprintf(os.Stderr, "bench: %s started again (pid %d) for its next runs\n", n, r.PID)
	}
}

func (b *bench) add(j runner.Job, res *runner.Result, rs *runner.Resources) {
	b.results = append(b.results, res)
	if b.influx != nil && rs != nil && res.Err == "" && res.Skipped == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := b.influx.Write(ctx, res, rs, time.Now()); err != nil {
			// said once; the bench goes on, as k6's output does when the database is down
			fmt.Fprintf(os.Stderr, "warning: %v; no more resource points will be written\n", err)
			b.influx = nil
		}
		cancel()
	}
	if j.Run <= 1 && res.Mode != report.EqualLoadMode {
		b.tables = append(b.tables, res)
	}
	path, err := b.runner.ResultPath(b.testid, j)
	if err != nil || res.Err != "" || b.report.AddFile(b.dir, path, rs) != nil {
		// k6 wrote no result (or one we cannot read): an invalid run, from what we know.
		b.report.Add(relOr(b.dir, path), res, rs)
	}
	b.checkpoint()
}

// checkpoint saves bench.json as it stands, unfinished (no end time): should the bench be
// killed outright (kill -9, the machine), every run that ended is in it, with its resources,
// and `make report` rebuilds the report from it.
func (b *bench) checkpoint() {
	b.report.Finish()
	b.report.Finished = time.Time{}
	if err := b.report.Save(b.dir); err != nil && !b.saveWarned {
		fmt.Fprintf(os.Stderr, "warning: %v: the runs are saved at the end only\n", err)
		b.saveWarned = true
	}
}

// begin starts the bench's report with the manifest, says what the bench will do, and
// calibrates the client when asked.
func (b *bench) begin(ctx context.Context, f *benchFlags, names []string) {
	m := manifest(ctx, b.stack, b.runner.K6, names, f.profile)
	m["restart_between_runs"] = f.restart
	b.report = report.New(f.testid, f.profile, m)
	restarts := "each target started once"
	if f.restart {
		restarts = "each target restarted before each of its runs"
	}
	fmt.Fprintf(os.Stderr, "bench %s: profile %s, %d run(s) per throughput cell, protocols %s, modes %s; pinning %s; %s\n",
		f.testid, f.profile, f.runs, strings.Join(f.protos, ","), strings.Join(f.modes, ","), m["pinning"], restarts)
	if f.calibrate > 0 {
		b.report.Calibration = b.calibrate(ctx, f)
		m["calibration"] = fmt.Sprintf("%d s per client against direct", f.calibrate)
	}
}

// runAll runs the planned cells, then the equal-load pass, until the last or a signal or a
// fatal failure (the upstream died).
func (b *bench) runAll(ctx context.Context, f *benchFlags, names []string) {
	var todo []benchJob
	for _, bj := range f.plan(names) {
		if b.runnable(bj.job) {
			todo = append(todo, bj)
		}
	}
	b.t0, b.total = time.Now(), len(todo)
	if slices.Contains(f.modes, "reused") {
		b.total += len(b.equalLoadJobs(f, names, nil))
	}
	for _, bj := range todo {
		if ctx.Err() != nil || b.fatal != nil {
			break
		}
		if !b.runnable(bj.job) {
			continue // its target was left out after it died (checkAlive)
		}
		b.step(bj.job, bj.runs)
		b.run(ctx, bj.job)
	}
	b.report.Finish()
	if slices.Contains(f.modes, "reused") && ctx.Err() == nil && b.fatal == nil {
		b.equalLoad(ctx, f, names)
	}
	b.report.Finished = time.Time{}
	b.report.Finish()
}

// writeReport prints the tables and the report's text, and saves bench.json, report.md and
// report.html.
func (b *bench) writeReport(f *benchFlags) error {
	fmt.Fprintf(os.Stderr, "\nbench: %d runs in %v\n", b.done, time.Since(b.t0).Round(time.Second))
	printTables(b.tables, f.profile, f.testid)
	// The tables above are run 1 of each cell; this is what the report makes of them all:
	// medians, CV, the fraction of direct and the client-bound flags.
	if err := report.Text(os.Stdout, b.report); err != nil {
		return err
	}
	if err := b.report.Save(b.dir); err != nil {
		return err
	}
	if err := report.Write(b.dir, b.report); err != nil {
		return err
	}
	fmt.Printf("\nreport: %s\n", filepath.Join(b.dir, "report.html"))
	// the Grafana `make bench OBSERVE=1` started beside InfluxDB shows the same run
	if g, err := observe.LoadGrafanaState(b.stack.RunDir); err == nil && g != nil && g.Alive() {
		fmt.Printf("grafana: %s\n", observe.DashboardURL(g.URL(), f.testid))
	}
	return nil
}

// withBaseline puts direct first among names when it is not there: every matrix is calibrated
// against the client's ceiling on this machine (the "vs direct" column), so a bench never runs
// without it.
func withBaseline(names []string) []string {
	if slices.Contains(names, stack.Direct) {
		return names
	}
	fmt.Fprintf(os.Stderr, "bench: %s added to the targets: the no-proxy baseline every target is shown against\n", stack.Direct)
	return append([]string{stack.Direct}, names...)
}

func relOr(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}

// step prints the progress line of the next run: run i of n, what runs, time so far and the
// time left at the pace so far.
func (b *bench) step(j runner.Job, runs int) {
	b.done++
	progress(b.done, b.total, j, runs, b.t0)
}

func progress(i, n int, j runner.Job, runs int, t0 time.Time) {
	el := time.Since(t0)
	eta := "–"
	if i > 1 {
		eta = fmtDur(time.Duration(float64(el) / float64(i-1) * float64(n-i+1)))
	}
	proto := j.Proto
	if proto == "" {
		proto = runner.Requires(j)
	}
	run := max(j.Run, 1)
	fmt.Fprintf(os.Stderr, "\n[%d/%d] %s %s %s run %d/%d  elapsed %s  ETA %s\n", i, n, j.Scenario, proto, j.Target, run, runs, fmtDur(el), eta)
}

func fmtDur(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
}

func cmdBench(ctx context.Context, args []string) (err error) {
	f, err := parseBenchFlags(args)
	if err != nil {
		return err
	}
	s, names, err := stackOf(f.targets)
	if err != nil {
		return err
	}
	if f.check {
		return nil
	}
	names = withBaseline(names)
	s.Pin = f.pin
	s.KeepGoing = stack.SelectsAll(f.targets)
	h, err := hold(ctx, s, "bench", names, f.runFlags)
	if err != nil {
		return err
	}
	var b *bench
	defer func() {
		err = errors.Join(err, h.down())
		if ctx.Err() != nil && b != nil && b.finished {
			// The report and results were written whole (neither stops halfway), and the stack
			// is down: only the exit status says a signal came, and this, the last thing said.
			err = errors.Join(err, fmt.Errorf("interrupted after its last run, while the report was written or the stack stopped: every run is in %s, and the report beside them is whole", b.dir))
		}
	}()
	st, r := h.st, h.r
	b = &bench{
		stack: s, runner: r, testid: f.testid, dir: h.dir, served: h.sv, pids: map[string]int{},
		dash: f.dashboard, restart: f.restart, influx: observe.ResourceWriterFromEnv(),
	}
	for n, t := range st.Targets {
		b.pids[n] = t.PID
	}
	b.begin(ctx, f, names)
	b.runAll(ctx, f, names)
	cut := ctx.Err() != nil // a run was cut short: after it, the report is still written
	b.finished = !cut
	if err := b.writeReport(f); err != nil {
		return err
	}
	if b.fatal != nil {
		return fmt.Errorf("%w; the runs before it are in %s, the report above covers them", b.fatal, b.dir)
	}
	// after the stack is down (deferred): the last thing said
	if cut {
		return fmt.Errorf("interrupted at run %d of %d (that run is not measured): the runs finished before it are in %s, the report above covers them, `make report ID=%s` rebuilds it", b.done, b.total, b.dir, b.testid)
	}
	err = invalidErr(b.results, b.dir)
	if failed := st.Failures(); len(failed) > 0 {
		// the last line: what a user must fix before the bench covers every target
		err = errors.Join(err, fmt.Errorf("%d target(s) failed, every other target was measured: %s", len(failed), strings.Join(failed, "; ")))
	}
	return err
}
