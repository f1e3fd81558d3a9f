package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// Run soaks p.Target: r runs the k6 scenario against the stack that is up while k6, the target
// and the upstream are read every p.Interval; then the growth is judged, the table printed to
// p.Out and everything saved in p.Dir/soak.json. The error says every way the soak failed, or
// that ctx ended it before its verdict. r.OnStart is Run's while it runs.
func Run(ctx context.Context, r *runner.Runner, p Plan) error {
	job := runner.Job{Scenario: p.scenario(), Target: p.Target, Env: []string{"PROFILE=stress", "DURATION=" + Duration(p.Minutes)}}
	resultPath, _ := r.ResultPath(p.TestID, job)

	k6 := &Process{Role: roleK6, Name: "k6"}
	procs := []*Process{k6}
	if p.Target != stack.Direct {
		procs = append(procs, &Process{Role: roleTarget, Name: p.Target, PID: p.TargetPID})
	}
	procs = append(procs, &Process{Role: roleUpstream, Name: stack.Direct, PID: p.UpstreamPID})
	rep := &Report{
		Schema: schema, TestID: p.TestID, Target: p.Target, Proto: p.Proto, Scenario: job.Scenario,
		Profile: "stress", Minutes: p.Minutes, IntervalS: p.Interval.Seconds(), Started: time.Now(), Processes: procs,
		Bounds: boundsDoc(), Result: resultPath,
	}
	fmt.Fprintf(p.Progress, "soak %s: %s against %s for %s minutes (stress profile), RSS and open files every %v\n",
		p.TestID, job.Scenario, p.Target, minutesText(p.Minutes), p.Interval)

	pids := map[string]int{}
	for _, pr := range procs {
		pids[pr.Role] = pr.PID
	}
	sampler := sample.StartUsageSampler(p.Interval, pids)
	defer func(prev func(int)) { r.OnStart = prev }(r.OnStart)
	// k6's pid is known only once it runs: followed from then on, and named in soak.json
	r.OnStart = func(pid int) {
		k6.PID = pid
		sampler.Follow(roleK6, pid)
	}
	res, rs := r.RunSampled(ctx, p.TestID, job, p.TargetPID)
	exit := sampler.Elapsed().Seconds()
	rep.Samples = samplesOf(sampler.Stop())
	rep.Resources = rs
	rep.Valid, rep.Invalid = res.Valid, res.Invalid
	path := filepath.Join(p.Dir, "soak.json")

	if ctx.Err() != nil {
		rep.Interrupted = true
		rep.Error = "interrupted before the end of the run"
		printTable(p.Out, rep)
		if err := rep.save(path); err != nil {
			return err
		}
		return fmt.Errorf("interrupted after %d samples (%.0f s): no verdict; the samples so far are in %s", len(rep.Samples), exit, path)
	}
	return rep.conclude(p.Out, res, resultPath, exit, path)
}

// conclude judges the soak from the k6 run's result (at resultPath, ended exit seconds after
// the sampler started) and the samples, prints the table to out and saves the report at path.
// The error says every way the soak failed.
func (r *Report) conclude(out io.Writer, res *result.Result, resultPath string, exit float64, path string) error {
	var errs []error
	if res.Err != "" || !res.Valid {
		why := res.Err
		if why == "" {
			why = strings.Join(res.Invalid, "; ")
		}
		errs = append(errs, fmt.Errorf("the k6 run is invalid (%s): %s", resultPath, why))
	}
	if w, werr := measuredWindow(resultPath, exit); werr != nil {
		errs = append(errs, fmt.Errorf("no verdict: %w", werr))
	} else {
		r.Window = &w
		if res.RPS != nil {
			r.RPS = *res.RPS
		} else if res.DurationS > 0 {
			r.RPS = res.Requests / res.DurationS
		}
		r.Verdict = judge(r.Processes, r.Samples, w, r.RPS)
	}
	printTable(out, r)
	for _, v := range r.Verdict {
		if !v.OK {
			errs = append(errs, fmt.Errorf("%s (%s) %s: %s", v.Name, v.Role, v.Bound.Metric, figures(v)))
		}
	}
	r.Pass = len(errs) == 0 && len(r.Verdict) > 0
	if len(errs) > 0 {
		r.Error = errors.Join(errs...).Error()
	}
	if err := r.save(path); err != nil {
		errs = append(errs, err)
	}
	fmt.Fprintf(out, "\nsoak: %s\n", path)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fmt.Fprintf(out, "soak passed: no process grew beyond its bound\n")
	return nil
}
