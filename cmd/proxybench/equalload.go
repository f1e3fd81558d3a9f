package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/proxybench/proxybench/runner"
)

// equalLoadJobs are the equal-load runs: per protocol of the pass that is among -protos, every
// target that serves it (no row for one that does not: the matrix's tables already say so),
// RUNS times, interleaved across the targets as the matrix is. With rates nil, every such
// protocol (to count them before the matrix ran); else only those with a rate.
func (b *bench) equalLoadJobs(f *benchFlags, names []string, rates map[string]int) []runner.Job {
	var jobs []runner.Job
	for _, p := range runner.EqualLoad.Protos {
		rate, ok := rates[p]
		if !slices.Contains(f.protos, p) || (rates != nil && !ok) {
			continue
		}
		for run := 1; run <= f.runs; run++ {
			for _, t := range names {
				if b.served.missing[t] != "" || !slices.Contains(b.served.protocols[t], p) {
					continue
				}
				jobs = append(jobs, runner.Job{
					Scenario: runner.EqualLoad.Scenario, Target: t, Proto: p, Run: run,
					Env: []string{"RATE=" + strconv.Itoa(rate)},
				})
			}
		}
	}
	return jobs
}

// readCeilings are the client's open-model ceilings by protocol that `make calibrate` kept in
// run/ceiling.json; none when it has not run on this machine.
func readCeilings(runDir string) map[string]int {
	var cs []runner.Ceiling
	data, err := os.ReadFile(filepath.Join(runDir, ceilingFile))
	if err != nil || json.Unmarshal(data, &cs) != nil {
		return nil
	}
	out := map[string]int{}
	for _, c := range cs {
		if c.Err == "" && c.Rate > 0 {
			out[c.Proto] = c.Rate
		}
	}
	return out
}

// equalLoad is the open-model pass: per protocol, every target at EqualLoadFraction of the
// slowest valid target's median reused req/s, or at the client's ceiling (make calibrate) if
// that is lower: a rate the client cannot hold measures the client.
func (b *bench) equalLoad(ctx context.Context, f *benchFlags, names []string) {
	rates := map[string]int{} // by protocol
	ceilings := readCeilings(b.stack.RunDir)
	for _, p := range runner.EqualLoad.Protos {
		if !slices.Contains(f.protos, p) {
			continue
		}
		slowest, who := math.Inf(1), ""
		for _, c := range b.report.Cells {
			if c.Scenario == "reused-"+p && c.Valid && c.RPS.N > 0 && c.RPS.Median > 0 && c.RPS.Median < slowest {
				slowest, who = c.RPS.Median, c.Target
			}
		}
		if who == "" {
			fmt.Fprintf(os.Stderr, "\nequal-load %s: not run, no valid reused-%s cell to take the rate from\n", p, p)
			continue
		}
		rates[p] = max(1, int(slowest*runner.EqualLoadFraction))
		if ceil, ok := ceilings[p]; ok && ceil < rates[p] {
			fmt.Fprintf(os.Stderr, "\nequal-load %s: %d req/s for every target: the client's ceiling (make calibrate, run/%s), below %.0f%% of %s's median %.0f req/s, the slowest valid\n",
				p, ceil, ceilingFile, runner.EqualLoadFraction*100, who, slowest)
			rates[p] = ceil
			continue
		}
		fmt.Fprintf(os.Stderr, "\nequal-load %s: %d req/s for every target (%.0f%% of %s's median %.0f req/s, the slowest valid)\n",
			p, rates[p], runner.EqualLoadFraction*100, who, slowest)
	}
	todo := b.equalLoadJobs(f, names, rates)
	b.total = b.done + len(todo) // less what has no rate to run at
	byProto := map[string][]*runner.Result{}
	for _, j := range todo {
		if ctx.Err() != nil {
			break
		}
		b.step(j, f.runs)
		res := b.run(ctx, j)
		if j.Run <= 1 {
			byProto[j.Proto] = append(byProto[j.Proto], res)
		}
	}
	for _, p := range runner.EqualLoad.Protos {
		if rs := byProto[p]; len(rs) > 0 {
			runner.PrintTable(os.Stdout, fmt.Sprintf("equal-load %s at %d req/s  (testid %s)", p, rates[p], b.testid), rs)
		}
	}
}
