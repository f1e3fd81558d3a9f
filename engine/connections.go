package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/stack"
)

// connections tells whether the plan sweeps the reused cells over connections.
func (p Plan) connections() bool {
	return slices.Contains(p.Modes, "connections") && len(p.ConnectionLevels) > 0
}

// ConnectionJobs are the connections sweep's runs: at each of ConnectionLevels in turn, every
// reused scenario of the plan's protocols against every target that serves it, with
// CONNECTIONS set to the level, each kept under connections/c<level>/ (no cell of the bench).
func (p Plan) ConnectionJobs(sv Served) []Job {
	var jobs []Job
	for _, level := range p.ConnectionLevels {
		for _, sc := range runner.Throughput {
			if sc.Mode != scenarios.Reused || !slices.Contains(p.Protos, runner.JobOf(sc, "", "").Requires()) {
				continue
			}
			for _, t := range p.Targets {
				j := runner.JobOf(sc, t, "")
				if !sv.Can(j) {
					continue
				}
				j.Env = []string{"CONNECTIONS=" + strconv.Itoa(level), sweepEnv("connections", j.Requires(), strconv.Itoa(level))}
				j.Dir = filepath.Join(report.ConnectionsDir, "c"+strconv.Itoa(level))
				jobs = append(jobs, Job{Job: j, Runs: 1})
			}
		}
	}
	return jobs
}

// connections is the sweep pass, after capacity: each run judged as any run is (a target
// that caps connections below the level is invalid, with the reason, and the bench's exit
// status says so), its req/s, p99 and the target's RSS kept as one point of the report's
// curves.
func (b *Bench) connections(ctx context.Context, p Plan) {
	jobs := p.ConnectionJobs(b.Served)
	fmt.Fprintf(b.Stderr, "\nconnections: the reused cells at %s connections\n", LevelsText(p.ConnectionLevels))
	for _, j := range jobs {
		if ctx.Err() != nil || b.fatal != nil {
			return
		}
		b.step(j)
		res, rs := b.Runner.Sampled(ctx, b.TestID, j.Job, b.PIDs[j.Target], b.PIDs[stack.Direct])
		if ctx.Err() == nil {
			b.checkAlive(ctx, j.Job, res)
		}
		file := ""
		if path, err := b.Runner.ResultPath(b.TestID, j.Job); err == nil {
			file = relOr(b.Dir, path)
		}
		level, _ := strconv.Atoi(strings.TrimPrefix(j.Env[0], "CONNECTIONS="))
		b.Report.AddConnections(report.NewConnectionsPoint(level, file, res, rs))
		b.writeSweep(res, rs, level)
		b.Results = append(b.Results, res) // an invalid point fails the bench as an invalid cell does
		b.checkpoint()
	}
}

// LevelsText is levels as CONNECTION_LEVELS spells them: 16,64,256.
func LevelsText(levels []int) string {
	s := make([]string, len(levels))
	for i, l := range levels {
		s[i] = strconv.Itoa(l)
	}
	return strings.Join(s, ",")
}
