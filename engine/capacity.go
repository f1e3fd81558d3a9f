package engine

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/proxybench/proxybench/internal/calibrate"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// capacityWarmup is each step's warm-up: the target already ran the rates below it, and a
// step is DURATION long whatever it is.
const capacityWarmup = "1s"

// The capacity search: from where it starts, how it climbs and how close it bisects.
const (
	capacityStart     = 1000 // req/s, when there is no equal-load rate to start from
	capacityFactor    = 2
	capacityPrecision = 0.05
	capacityFloorDiv  = 32 // the floor is the start over this: below it, "none at this goal"
	// a step whose p99 alone missed the goal by less than this factor is in doubt, and tried
	// again (calibrate.Search): on 2 CPUs a Go runtime's pause or the machine's stall is of
	// the order of a 10 ms goal
	capacityDoubtWithin = 1.5
)

// capacity is the search pass, after equal load: per protocol of CapacityProtos, per target,
// the highest rate of the native open model it holds with its p99 within CapacityP99 (each
// step an equal-load run, DURATION long, judged by verdict.Held), found by a calibrate.Search
// from the equal-load rate (whose run is its first step), doubled while held, bisected to
// within 5%. The client's ceiling bounds it: make calibrate's open ladder when it ran, else
// direct's own capacity (the client and the upstream alone); a target still holding there is
// "≥" that rate, never a figure above what the client proved it can send.
func (b *Bench) capacity(ctx context.Context, p Plan, rates map[string]int) {
	for _, proto := range p.CapacityProtos {
		if !slices.Contains(p.Protos, proto) || ctx.Err() != nil || b.fatal != nil {
			continue
		}
		bound, from := p.Ceilings[proto], report.CeilingCalibrate
		if bound == 0 {
			from = ""
		}
		first := rates[proto]
		if first == 0 {
			first = capacityStart
		}
		fmt.Fprintf(b.Stderr, "\ncapacity %s: the highest rate each target holds with p99 ≤ %g ms, from %d req/s\n", proto, p.CapacityP99, first)
		for _, t := range directFirst(p.Targets) {
			if !b.Served.Serves(t, proto) || ctx.Err() != nil || b.fatal != nil {
				continue
			}
			c := b.searchCapacity(ctx, p, t, proto, first, bound, from)
			b.Report.AddCapacity(c)
			b.checkpoint()
			if t == stack.Direct && bound == 0 && c.Rate > 0 {
				// what direct cannot hold, the client and the upstream cannot send
				bound, from = c.Rate, report.CeilingDirect
			}
		}
	}
}

// searchCapacity is one target's search over proto.
func (b *Bench) searchCapacity(ctx context.Context, p Plan, target, proto string, first, bound int, from string) report.CapacityCell {
	c := report.CapacityCell{Target: target, Proto: proto, GoalMS: p.CapacityP99, Ceiling: bound, CeilingFrom: from}
	var files []string // each try's result, in the order tried
	step := 0
	s := calibrate.Search{
		First: first, Ceiling: bound, Factor: capacityFactor, Precision: capacityPrecision,
		Floor: max(1, first/capacityFloorDiv),
	}
	found := s.Run(func(rate int) calibrate.SearchStep {
		conns := capacityConnections(proto, rate, p.CapacityP99, p.Connections)
		if res, file := b.equalLoadRun(target, proto, rate); res != nil && conns == p.Connections && len(files) == 0 {
			// the equal-load pass ran this very step: its run is the search's first try
			files = append(files, file)
			fmt.Fprintf(b.Stderr, "capacity %s %s: %d req/s (the equal-load run)\n", proto, target, rate)
			return b.capacityStep(target, proto, rate, p.CapacityP99, res)
		}
		step++
		j := runner.JobOf(runner.EqualLoad, target, proto)
		j.Run, j.Dir = step, report.CapacityDir
		j.Env = []string{"RATE=" + strconv.Itoa(rate), "WARMUP=" + capacityWarmup}
		pool := ""
		if conns != p.Connections {
			j.Env = append(j.Env, "CONNECTIONS="+strconv.Itoa(conns))
			pool = fmt.Sprintf(", %d connections", conns)
		}
		fmt.Fprintf(b.Stderr, "capacity %s %s: %d req/s (step %d%s)\n", proto, target, rate, step, pool)
		res, _ := b.Runner.Sampled(ctx, b.TestID, j, b.PIDs[target], b.PIDs[stack.Direct])
		if ctx.Err() == nil {
			b.checkAlive(ctx, j, res)
		}
		file := ""
		if path, err := b.Runner.ResultPath(b.TestID, j); err == nil {
			file = relOr(b.Dir, path)
		}
		files = append(files, file)
		return b.capacityStep(target, proto, rate, p.CapacityP99, res)
	}, func() bool { return ctx.Err() != nil || b.fatal != nil })
	c.Rate, c.AtCeiling = found.Rate, found.AtCeiling
	for i, st := range found.Steps {
		c.Steps = append(c.Steps, report.CapacityStep{SearchStep: st, File: files[i]})
		if st.Held && st.Rate == found.Rate { // the last held try of it
			c.P99 = st.P99
		}
	}
	if ctx.Err() != nil {
		c.Err = "interrupted: the search did not end"
	}
	return c
}

// capacityStep judges one step of target's search over proto at rate, and writes it beside
// k6's points for the curves dashboard.
func (b *Bench) capacityStep(target, proto string, rate int, goalMS float64, res *result.Result) calibrate.SearchStep {
	st := calibrate.SearchStep{P99: res.Latency.P99, Why: res.Held(goalMS), Outside: res.OutsideLoad != nil && res.OutsideLoad.Over}
	if st.Why != "" {
		st.Doubt = capacityDoubt(res, goalMS)
	}
	b.point(func(ctx context.Context, p Points) error {
		return p.WriteStep(ctx, observe.CapacityStep{
			TestID: b.TestID, Target: target, Proto: proto, GoalMS: goalMS,
			OfferedRPS: rate, P99MS: st.P99, Held: st.Why == "",
		}, time.Now())
	})
	return st
}

// capacityDoubt says why a step not held may be the machine's rather than the target's, so
// that the search tries it again: other processes took more than their share of the machine
// while it ran, or its p99 alone missed the goal, by less than capacityDoubtWithin times it.
// "" for a step that failed plainly (invalid, behind schedule, p99 far over the goal).
func capacityDoubt(res *result.Result, goalMS float64) string {
	if o := res.OutsideLoad; o != nil && o.Over {
		return fmt.Sprintf("outside load: other processes took %.0f%% of the machine", o.CPUShare*100)
	}
	if res.Held(math.Inf(1)) == "" && res.Latency.P99 <= capacityDoubtWithin*goalMS {
		return fmt.Sprintf("p99 within %g × the goal", capacityDoubtWithin)
	}
	return ""
}

// capacityConnections is the pool of a step at rate over proto: the plan's connections, or
// over HTTP/1.1 (one request at a time on a connection) as many as make each connection's
// requests due no closer than the goal. With fewer, a target answering well within the goal
// still finds the next request due on a busy connection (behind schedule): 4 connections at
// 2,355 req/s are due every 1.7 ms, and direct "could not sustain" it with its p99 at 2.8 ms
// against a goal of 10. With these, a request behind schedule means an answer slower than the
// goal, or a client that could not send on time: both the step's to fail. Over h2 every request
// is a stream of its own, whatever is in flight: the plan's connections.
func capacityConnections(proto string, rate int, goalMS float64, connections int) int {
	if proto != "h1c" && proto != "h1" {
		return connections
	}
	return max(connections, int(math.Ceil(float64(rate)*goalMS/1000)))
}

// equalLoadRun is the equal-load pass's first run of target over proto when it ran at rate,
// read from its file (judged as it is read), and that file relative to the bench's folder.
func (b *Bench) equalLoadRun(target, proto string, rate int) (*result.Result, string) {
	for _, e := range b.Report.EqualLoad {
		if e.Target != target || e.Proto != proto || max(e.Run, 1) != 1 || int(e.RateRPS) != rate || e.File == "" {
			continue
		}
		path := e.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(b.Dir, path)
		}
		if res, err := result.LoadResult(path); err == nil {
			return res, e.File
		}
	}
	return nil, ""
}

// directFirst is the targets with direct first: its capacity bounds the others' when the
// client's ceiling was not measured.
func directFirst(targets []string) []string {
	out := slices.Clone(targets)
	slices.SortStableFunc(out, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == stack.Direct:
			return -1
		case b == stack.Direct:
			return 1
		}
		return 0
	})
	return out
}
