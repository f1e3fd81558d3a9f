package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/stack"
)

// Run runs the plan's matrix, then its equal-load pass, its capacity search and its
// connections sweep, until the last run, a signal (ctx) or a fatal failure (the upstream
// died). Every run is recorded as it ends.
func (b *Bench) Run(ctx context.Context, p Plan) {
	var todo []Job
	for _, j := range p.Matrix() {
		if b.runnable(j.Job) {
			todo = append(todo, j)
		}
	}
	b.t0, b.total = time.Now(), len(todo)
	if p.equalLoad() {
		b.total += len(p.EqualLoadJobs(b.Served, nil))
	}
	if p.connections() {
		b.total += len(p.ConnectionJobs(b.Served))
	}
	for _, j := range todo {
		if ctx.Err() != nil || b.fatal != nil {
			break
		}
		if !b.runnable(j.Job) {
			continue // its target was left out after it died (checkAlive)
		}
		b.step(j)
		b.run(ctx, j.Job)
	}
	b.Report.Finish()
	rates := map[string]int{}
	if p.equalLoad() && ctx.Err() == nil && b.fatal == nil {
		rates = b.equalLoad(ctx, p)
	}
	if p.capacity() && ctx.Err() == nil && b.fatal == nil {
		b.capacity(ctx, p, rates)
	}
	if p.connections() && ctx.Err() == nil && b.fatal == nil {
		b.connections(ctx, p)
	}
	b.Report.Finished = time.Time{}
	b.Report.Finish()
	b.finished = ctx.Err() == nil
}

// runnable tells whether a job can run, else records it as not run (its target lacks the
// protocol, or is not up) and returns false: one "not run" row per cell, whatever RUNS.
func (b *Bench) runnable(j runner.Job) bool {
	if b.Served.Can(j) {
		return true
	}
	if j.Run <= 1 {
		b.add(j, b.Served.NotRun(b.Runner, b.TestID, j), nil)
	}
	return false
}

// run runs one job with its resources sampled, and adds it to the bench. An idle run starts on
// a fresh process whatever RESTART says: a target that grew in an earlier run (10 000 TLS
// connections over h1 before h2) hands the new connections the memory it kept, and its KiB per
// idle connection read 0.5 where a fresh process needs 14. Each proxy's idle run follows
// direct's in its protocol's round, so no proxy meets the pool a restarted upstream broke.
func (b *Bench) run(ctx context.Context, j runner.Job) *result.Result {
	if b.Restart || j.Mode() == scenarios.Idle {
		pid, err := b.Targets.Restart(ctx, j.Target)
		if err != nil {
			// not measured: an invalid run that says why, and the target is down from now on
			res := runner.Failed(b.TestID, j, err)
			b.add(j, res, nil)
			return res
		}
		b.PIDs[j.Target] = pid
	}
	if b.Dashboard {
		if path, err := b.Runner.ResultPath(b.TestID, j); err == nil {
			// No port (no server to open); a 1 s period, since k6 exports nothing from a run
			// shorter than two periods, and a probe takes a few seconds.
			j.Env = append(j.Env, "K6_WEB_DASHBOARD=true", "K6_WEB_DASHBOARD_PORT=-1", "K6_WEB_DASHBOARD_PERIOD=1s",
				"K6_WEB_DASHBOARD_EXPORT="+report.DashboardFile(path))
		}
	}
	res, rs := b.Runner.Sampled(ctx, b.TestID, j, b.PIDs[j.Target], b.PIDs[stack.Direct])
	if ctx.Err() == nil {
		b.checkAlive(ctx, j, res)
	}
	b.add(j, res, rs)
	return res
}

// point writes one point to b.Points, if any. A failure is said once: the bench goes on, as
// k6's output does when the database is down, and writes no more.
func (b *Bench) point(write func(context.Context, Points) error) {
	if b.Points == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := write(ctx, b.Points); err != nil {
		fmt.Fprintf(b.Stderr, "warning: %v; no more points will be written beside k6's\n", err)
		b.Points = nil
	}
}

// add records a run: in memory, in InfluxDB when asked, and in bench.json at once.
func (b *Bench) add(j runner.Job, res *result.Result, rs *sample.Resources) {
	b.Results = append(b.Results, res)
	if b.Points != nil && rs != nil && res.Err == "" && res.Skipped == "" {
		b.point(func(ctx context.Context, p Points) error { return p.Write(ctx, res, rs, time.Now()) })
	}
	b.writeSweep(res, rs, 0)
	if j.Run <= 1 && res.Mode != report.EqualLoadMode {
		b.tables = append(b.tables, res)
	}
	path, err := b.Runner.ResultPath(b.TestID, j)
	if err != nil || res.Err != "" || b.Report.AddFile(b.Dir, path, rs) != nil {
		// k6 wrote no result (or one we cannot read): an invalid run, from what we know.
		b.Report.Add(relOr(b.Dir, path), res, rs)
	}
	b.checkpoint()
}

// checkpoint saves bench.json as it stands, unfinished (no end time): should the bench be
// killed outright (kill -9, the machine), every run that ended is in it, with its resources,
// and `make report` rebuilds the report from it.
func (b *Bench) checkpoint() {
	b.Report.Finish()
	b.Report.Finished = time.Time{}
	if err := b.save(); err != nil && !b.saveWarned {
		fmt.Fprintf(b.Stderr, "warning: %v: the runs are saved at the end only\n", err)
		b.saveWarned = true
	}
}

func (b *Bench) save() error {
	if b.Save != nil {
		return b.Save(b.Report)
	}
	return b.Report.Save(b.Dir)
}

func relOr(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
