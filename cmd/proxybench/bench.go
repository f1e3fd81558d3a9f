package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
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

// profileRuns is how many times each throughput cell runs when RUNS is not given.
var profileRuns = map[string]int{"smoke": 1, "stable": 5, "stress": 3}

var (
	allProtos = []string{"h1", "h1c", "h2", "h3"}
	allModes  = []string{"reused", "fresh", "probe"}
)

type benchFlags struct {
	*runFlags
	protos, modes []string
	runs          int
	dashboard     bool
	restart       bool
	pin           *stack.Pinning
	check         bool // only check the flags and targets
	calibrate     int  // seconds per client of the calibration at the start; 0: none
}

func envString(key, def string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return def
}

// listFlag parses a comma-separated list whose every entry must be one of valid.
func listFlag(name, spec string, valid []string) ([]string, error) {
	if spec == "" || spec == "all" {
		return valid, nil
	}
	var out []string
	for _, v := range strings.Split(spec, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if v == "all" {
			return nil, fmt.Errorf("%s=%q: all stands alone, not in a list: valid are all, or a comma-separated list of %s", name, spec, strings.Join(valid, ", "))
		}
		if !slices.Contains(valid, v) {
			return nil, fmt.Errorf("unknown %s %q: valid are all, or a comma-separated list of %s", name, v, strings.Join(valid, ", "))
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s=%q names nothing: valid are all, or a comma-separated list of %s", name, spec, strings.Join(valid, ", "))
	}
	return out, nil
}

// envSwitch is the switch key of the environment, as the Makefile reads one (truthy): on when
// 1, true or yes, off when empty, 0, false or no; anything else is an error, not "off", so that
// a typo is not a bench without what was asked for.
func envSwitch(key string) (bool, error) {
	switch v := strings.ToLower(envString(key, "")); v {
	case "1", "true", "yes":
		return true, nil
	case "", "0", "false", "no":
		return false, nil
	default:
		return false, fmt.Errorf("%s=%q: a switch is 1, true or yes (on), or empty, 0, false or no (off)", key, os.Getenv(key))
	}
}

func parseBenchFlags(args []string) (*benchFlags, error) {
	dashOn, err := envSwitch("DASHBOARD")
	if err != nil {
		return nil, err
	}
	restartOn, err := envSwitch("RESTART")
	if err != nil {
		return nil, err
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	protos := fs.String("protos", envString("PROTOS", "all"), "protocols: all or a comma-separated list of h1, h1c, h2, h3")
	modes := fs.String("modes", envString("MODES", "all"), "connection patterns: all or a comma-separated list of reused, fresh, probe")
	runs := fs.String("runs", envString("RUNS", ""), "runs per throughput cell (default: smoke 1, stable 5, stress 3)")
	dash := fs.Bool("dashboard", dashOn, "keep k6's web dashboard HTML export of every run")
	pin := pinFlag(fs)
	restart := fs.Bool("restart", restartOn, "restart the target before each of its runs, so that no run inherits another's state")
	check := fs.Bool("check", false, "check the flags and targets, then exit (make bench does, before setup)")
	calibrate := fs.String("calibrate-seconds", envString("CALIBRATE_SECONDS", strconv.Itoa(benchCalibrateSeconds)), "seconds per client of the client calibration against direct at the start (0: none)")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return nil, err
	}
	b := &benchFlags{runFlags: f, dashboard: *dash, restart: *restart, runs: profileRuns[f.profile], check: *check}
	if b.protos, err = listFlag("PROTOS", *protos, allProtos); err != nil {
		return nil, err
	}
	if b.modes, err = listFlag("MODES", *modes, allModes); err != nil {
		return nil, err
	}
	if b.pin, err = parsePin(*pin); err != nil {
		return nil, err
	}
	if b.calibrate, err = strconv.Atoi(strings.TrimSpace(*calibrate)); err != nil || b.calibrate != 0 && (b.calibrate < 2 || b.calibrate > 60) {
		return nil, fmt.Errorf("CALIBRATE_SECONDS=%q: want 0 (no calibration) or a whole number of seconds from 2 to 60", *calibrate)
	}
	if *runs != "" {
		n, err := strconv.Atoi(strings.TrimSpace(*runs))
		if err != nil || n < 1 || n > 100 {
			return nil, fmt.Errorf("RUNS=%q: want a whole number from 1 to 100 (runs per throughput cell; empty: the profile's, smoke 1, stable 5, stress 3)", *runs)
		}
		b.runs = n
	}
	return b, nil
}

// benchCalibrateSeconds is how long each client runs in the bench's own calibration: short, as
// it runs at every bench; `make calibrate` is the long one.
const benchCalibrateSeconds = 3

// calibrate measures the client's ceiling before the matrix: k6 and the native peers on the
// same short load against direct (32 connections, h2 16 streams: the smoke profile's, unless
// CONNECTIONS and STREAMS say otherwise), for each protocol of the bench that has a peer. Its
// k6 results go to a folder of their own (<testid>-calibrate), out of the bench's cells.
func (x *bench) calibrate(ctx context.Context, f *benchFlags) []*runner.Calibration {
	if err := peersInstalled(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: no client calibration: %v\n", err)
		return nil
	}
	conns, streams := 32, 16
	if n, err := strconv.Atoi(os.Getenv("CONNECTIONS")); err == nil {
		conns = n
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMS")); err == nil {
		streams = n
	}
	var rows []*runner.Calibration
	for _, p := range calibrateProtos {
		if !slices.Contains(f.protos, p) || !slices.Contains(x.sv.protocols[stack.Direct], p) || ctx.Err() != nil {
			continue
		}
		load := calibrationLoad(x.s.Config, stack.Direct, p, conns, streams, f.calibrate)
		j := runner.Job{Target: stack.Direct, Proto: p, Run: 1, Env: load.K6Env()}
		// the client the matrix runs with: its ceiling is the one the report's figures have
		rows = append(rows, x.r.Calibrate(ctx, x.testid+"-calibrate", j, load, x.pids[stack.Direct], []string{f.client})...)
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
	s       *stack.Stack
	r       *runner.Runner
	testid  string
	dir     string
	sv      served
	pids    map[string]int
	b       *report.Bench
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
func (x *bench) runnable(j runner.Job) bool {
	var res *runner.Result
	if how := x.sv.missing[j.Target]; how != "" {
		if j.Run > 1 {
			return false
		}
		res = x.r.SkipMissing(x.testid, j, how)
	} else if need := runner.Requires(j); !slices.Contains(x.sv.protocols[j.Target], need) {
		if j.Run > 1 {
			return false
		}
		res = x.r.Skip(x.testid, j, x.sv.protocols[j.Target])
	} else {
		return true
	}
	x.add(j, res, nil) // one "not run" row per cell, whatever RUNS
	return false
}

// run runs one job with its resources sampled, and adds it to the bench.
func (x *bench) run(ctx context.Context, j runner.Job) *runner.Result {
	if x.restart {
		r, err := x.s.Restart(ctx, j.Target)
		if err != nil {
			// not measured: an invalid run that says why, and the target is down from now on
			res := runner.Failed(x.testid, j, err)
			x.add(j, res, nil)
			return res
		}
		x.pids[j.Target] = r.PID
	}
	if x.dash {
		if path, err := x.r.ResultPath(x.testid, j); err == nil {
			// No port (no server to open); a 1 s period, since k6 exports nothing from a run
			// shorter than two periods, and a probe takes a few seconds.
			j.Env = append(j.Env, "K6_WEB_DASHBOARD=true", "K6_WEB_DASHBOARD_PORT=-1", "K6_WEB_DASHBOARD_PERIOD=1s",
				"K6_WEB_DASHBOARD_EXPORT="+report.DashboardFile(path))
		}
	}
	x.r.UpstreamPID = x.pids[stack.Direct]
	res, rs := x.r.RunSampled(ctx, x.testid, j, x.pids[j.Target])
	if ctx.Err() == nil {
		x.checkAlive(ctx, j, res)
	}
	x.add(j, res, rs)
	return res
}

// checkAlive is what follows a run whose upstream or target died, was stopped (SIGSTOP) or,
// for the target, held the run past RUN_TIMEOUT: the run is invalid, with the end of that
// one's log; a proxy is started again (verified) for its next runs, or left out of them if it
// will not start; the upstream's death or stop ends the bench (x.fatal), since every other
// figure would be measured against nothing.
func (x *bench) checkAlive(ctx context.Context, j runner.Job, res *runner.Result) {
	// the upstream first: a proxy's run cut off because the upstream hung is the upstream's fault
	for _, n := range slices.Compact([]string{stack.Direct, j.Target}) {
		p := stack.Process{PID: x.pids[n]}
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
		log := filepath.Join(x.s.RunDir, n, n+".log")
		tail, _ := os.ReadFile(log)
		why := fmt.Sprintf("%s (pid %d) %s; the end of %s: %s", n, p.PID, what, log,
			strings.ReplaceAll(stack.LastLines(string(tail), 5), "\n", " | "))
		path, _ := x.r.ResultPath(x.testid, j)
		if err := runner.MarkInvalid(res, path, why); err != nil {
			fmt.Fprintf(os.Stderr, "warning: %s: %v\n", path, err)
		}
		fmt.Fprintf(os.Stderr, "bench: %s\n", why)
		if n == stack.Direct && gone {
			x.fatal = fmt.Errorf("the upstream (direct, pid %d) %s (%s %s): the bench stopped, as no figure means anything without it (its log: %s)", p.PID, what, j.Scenario, j.Target, log)
			return
		}
		r, err := x.s.Restart(ctx, n)
		if err != nil {
			x.sv.missing[n] = stack.LabelNotVerified + ": " + what + " and did not start again: " + stack.FirstLine(err.Error())
			fmt.Fprintf(os.Stderr, "bench: %s is left out of its other runs: %v\n", n, err)
			continue
		}
		x.pids[n] = r.PID
		fmt.Fprintf(os.Stderr, "bench: %s started again (pid %d) for its next runs\n", n, r.PID)
	}
}

func (x *bench) add(j runner.Job, res *runner.Result, rs *runner.Resources) {
	x.results = append(x.results, res)
	if x.influx != nil && rs != nil && res.Err == "" && res.Skipped == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := x.influx.Write(ctx, res, rs, time.Now()); err != nil {
			// said once; the bench goes on, as k6's output does when the database is down
			fmt.Fprintf(os.Stderr, "warning: %v; no more resource points will be written\n", err)
			x.influx = nil
		}
		cancel()
	}
	if j.Run <= 1 && res.Mode != report.EqualLoadMode {
		x.tables = append(x.tables, res)
	}
	path, err := x.r.ResultPath(x.testid, j)
	if err != nil || res.Err != "" || x.b.AddFile(x.dir, path, rs) != nil {
		// k6 wrote no result (or one we cannot read): an invalid run, from what we know.
		x.b.Add(relOr(x.dir, path), res, rs)
	}
	x.checkpoint()
}

// checkpoint saves bench.json as it stands, unfinished (no end time): should the bench be
// killed outright (kill -9, the machine), every run that ended is in it, with its resources,
// and `make report` rebuilds the report from it.
func (x *bench) checkpoint() {
	x.b.Finish()
	x.b.Finished = time.Time{}
	if err := x.b.Save(x.dir); err != nil && !x.saveWarned {
		fmt.Fprintf(os.Stderr, "warning: %v: the runs are saved at the end only\n", err)
		x.saveWarned = true
	}
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
func (x *bench) step(j runner.Job, runs int) {
	x.done++
	progress(x.done, x.total, j, runs, x.t0)
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
	s, err := newStack()
	if err != nil {
		return err
	}
	names, err := s.Config.Select(f.targets)
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
	var x *bench
	defer func() {
		err = errors.Join(err, h.down())
		if ctx.Err() != nil && x != nil && x.finished {
			// The report and results were written whole (neither stops halfway), and the stack
			// is down: only the exit status says a signal came, and this, the last thing said.
			err = errors.Join(err, fmt.Errorf("interrupted after its last run, while the report was written or the stack stopped: every run is in %s, and the report beside them is whole", x.dir))
		}
	}()
	st, r := h.st, h.r
	x = &bench{s: s, r: r, testid: f.testid, dir: h.dir, sv: h.sv, pids: map[string]int{},
		dash: f.dashboard, restart: f.restart, influx: observe.ResourceWriterFromEnv()}
	for n, t := range st.Targets {
		x.pids[n] = t.PID
	}
	m := manifest(ctx, s, r.K6, names, f.profile)
	m["restart_between_runs"] = f.restart
	x.b = report.New(f.testid, f.profile, m)
	restarts := "each target started once"
	if f.restart {
		restarts = "each target restarted before each of its runs"
	}
	fmt.Fprintf(os.Stderr, "bench %s: profile %s, %d run(s) per throughput cell, protocols %s, modes %s; pinning %s; %s\n",
		f.testid, f.profile, f.runs, strings.Join(f.protos, ","), strings.Join(f.modes, ","), m["pinning"], restarts)

	if f.calibrate > 0 {
		x.b.Calibration = x.calibrate(ctx, f)
		m["calibration"] = fmt.Sprintf("%d s per client against direct", f.calibrate)
	}
	var todo []benchJob
	for _, bj := range f.plan(names) {
		if x.runnable(bj.job) {
			todo = append(todo, bj)
		}
	}
	x.t0, x.total = time.Now(), len(todo)
	if slices.Contains(f.modes, "reused") {
		x.total += len(x.equalLoadJobs(f, names, nil))
	}
	for _, bj := range todo {
		if ctx.Err() != nil || x.fatal != nil {
			break
		}
		if !x.runnable(bj.job) {
			continue // its target was left out after it died (checkAlive)
		}
		x.step(bj.job, bj.runs)
		x.run(ctx, bj.job)
	}
	x.b.Finish()
	if slices.Contains(f.modes, "reused") && ctx.Err() == nil && x.fatal == nil {
		x.equalLoad(ctx, f, names)
	}
	x.b.Finished = time.Time{}
	x.b.Finish()
	cut := ctx.Err() != nil // a run was cut short: after it, the report is still written
	x.finished = !cut
	fmt.Fprintf(os.Stderr, "\nbench: %d runs in %v\n", x.done, time.Since(x.t0).Round(time.Second))
	printTables(x.tables, f.profile, f.testid)
	// The tables above are run 1 of each cell; this is what the report makes of them all:
	// medians, CV, the fraction of direct and the client-bound flags.
	if err := report.Text(os.Stdout, x.b); err != nil {
		return err
	}
	if err := x.b.Save(x.dir); err != nil {
		return err
	}
	if err := report.Write(x.dir, x.b); err != nil {
		return err
	}
	fmt.Printf("\nreport: %s\n", filepath.Join(x.dir, "report.html"))
	if x.fatal != nil {
		return fmt.Errorf("%w; the runs before it are in %s, the report above covers them", x.fatal, x.dir)
	}
	// after the stack is down (deferred): the last thing said
	if cut {
		return fmt.Errorf("interrupted at run %d of %d (that run is not measured): the runs finished before it are in %s, the report above covers them, `make report ID=%s` rebuilds it", x.done, x.total, x.dir, x.testid)
	}
	err = invalidErr(x.results, x.dir)
	if failed := st.Failures(); len(failed) > 0 {
		// the last line: what a user must fix before the bench covers every target
		err = errors.Join(err, fmt.Errorf("%d target(s) failed, every other target was measured: %s", len(failed), strings.Join(failed, "; ")))
	}
	return err
}

// equalLoadJobs are the equal-load runs: per protocol of the pass that is among -protos, every
// target that serves it (no row for one that does not: the matrix's tables already say so),
// RUNS times, interleaved across the targets as the matrix is. With rates nil, every such
// protocol (to count them before the matrix ran); else only those with a rate.
func (x *bench) equalLoadJobs(f *benchFlags, names []string, rates map[string]int) []runner.Job {
	var jobs []runner.Job
	for _, p := range runner.EqualLoad.Protos {
		rate, ok := rates[p]
		if !slices.Contains(f.protos, p) || (rates != nil && !ok) {
			continue
		}
		for run := 1; run <= f.runs; run++ {
			for _, t := range names {
				if x.sv.missing[t] != "" || !slices.Contains(x.sv.protocols[t], p) {
					continue
				}
				jobs = append(jobs, runner.Job{Scenario: runner.EqualLoad.Scenario, Target: t, Proto: p, Run: run,
					Env: []string{"RATE=" + strconv.Itoa(rate)}})
			}
		}
	}
	return jobs
}

// equalLoad is the open-model pass: per protocol, every target at EqualLoadFraction of the
// slowest valid target's median reused req/s.
func (x *bench) equalLoad(ctx context.Context, f *benchFlags, names []string) {
	rates := map[string]int{} // by protocol
	for _, p := range runner.EqualLoad.Protos {
		if !slices.Contains(f.protos, p) {
			continue
		}
		slowest, who := math.Inf(1), ""
		for _, c := range x.b.Cells {
			if c.Scenario == "reused-"+p && c.Valid && c.RPS.N > 0 && c.RPS.Median > 0 && c.RPS.Median < slowest {
				slowest, who = c.RPS.Median, c.Target
			}
		}
		if who == "" {
			fmt.Fprintf(os.Stderr, "\nequal-load %s: not run, no valid reused-%s cell to take the rate from\n", p, p)
			continue
		}
		rates[p] = max(1, int(slowest*runner.EqualLoadFraction))
		fmt.Fprintf(os.Stderr, "\nequal-load %s: %d req/s for every target (%.0f%% of %s's median %.0f req/s, the slowest valid)\n",
			p, rates[p], runner.EqualLoadFraction*100, who, slowest)
	}
	todo := x.equalLoadJobs(f, names, rates)
	x.total = x.done + len(todo) // less what has no rate to run at
	byProto := map[string][]*runner.Result{}
	for _, j := range todo {
		if ctx.Err() != nil {
			break
		}
		x.step(j, f.runs)
		res := x.run(ctx, j)
		if j.Run <= 1 {
			byProto[j.Proto] = append(byProto[j.Proto], res)
		}
	}
	for _, p := range runner.EqualLoad.Protos {
		if rs := byProto[p]; len(rs) > 0 {
			runner.PrintTable(os.Stdout, fmt.Sprintf("equal-load %s at %d req/s  (testid %s)", p, rates[p], x.testid), rs)
		}
	}
}
