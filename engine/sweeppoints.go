package engine

import (
	"context"
	"strings"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/runner"
)

// sweepEnv is SWEEP_POINT for a sweep's run: its place on the sweep ("connections h1c 256",
// "bodies h2 1048576 download"), which the scripts tag every point with, so that the
// comparison's dashboards leave the sweeps' runs out of the matrix's cells (a connections level
// runs the reused cell's scenario, and every body size the same scenario).
func sweepEnv(parts ...string) string {
	return "SWEEP_POINT=" + strings.Join(parts, " ")
}

// sweepPoint is a sweep's run as the curves dashboard reads it: a connections level's req/s,
// p99 and RSS (connections > 0: the level it ran at), a body size's MB/s and CPU per MB, an
// idle run's KiB per connection held; false for a run of no sweep, or one that ran nothing.
func sweepPoint(testid string, res *result.Result, rs *sample.Resources, connections int) (observe.SweepPoint, bool) {
	if res == nil || res.Err != "" || res.Skipped != "" {
		return observe.SweepPoint{}, false
	}
	p := observe.SweepPoint{TestID: testid, Target: res.Target, Proto: res.Proto, Valid: res.Valid, P99MS: res.Latency.P99}
	if p.Proto == "" {
		p.Proto = runner.Job{Scenario: res.Scenario}.Requires()
	}
	if res.RPS != nil {
		p.RPS = *res.RPS
	}
	if rs != nil {
		p.RSSPeakMB = result.Round(rs.RSSPeakMB, 1) // as the report's connections table
	}
	switch {
	case connections > 0:
		p.Sweep, p.X = observe.ConnectionsSweep, float64(connections)
	case res.Body != nil:
		p.Sweep, p.Direction, p.X = observe.BodiesSweep, res.Body.Direction, res.Body.Bytes
		p.MBPerS, p.CPUMsPerMB = res.Body.MBPerS, res.Body.TargetCPUMsPerMB
	case res.IdleCost != nil:
		kib := res.IdleCost.KiBPerConnection
		p.Sweep, p.X, p.KiBPerConnection = observe.IdleSweep, res.IdleCost.ConnectionsHeld, &kib
	default:
		return observe.SweepPoint{}, false
	}
	return p, true
}

// writeSweep writes res as a sweep's point beside k6's, when it is one.
func (b *Bench) writeSweep(res *result.Result, rs *sample.Resources, connections int) {
	if p, ok := sweepPoint(b.TestID, res, rs, connections); ok {
		b.point(func(ctx context.Context, w Points) error { return w.WriteSweep(ctx, p, time.Now()) })
	}
}
