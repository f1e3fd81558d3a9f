package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/proxybench/proxybench/internal/calibrate"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
)

// CeilingFile is where `make calibrate` keeps the client's open-model ceilings (Plan.Ceilings),
// beside the stack's other state.
const CeilingFile = "ceiling.json"

// ReadCeilings are the client's open-model ceilings by protocol that `make calibrate` kept in
// runDir's CeilingFile; none when it has not run on this machine.
func ReadCeilings(runDir string) map[string]int {
	var cs []calibrate.Ceiling
	data, err := os.ReadFile(filepath.Join(runDir, CeilingFile))
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
func (b *Bench) equalLoad(ctx context.Context, p Plan) map[string]int {
	rates := map[string]int{} // by protocol
	for _, proto := range runner.EqualLoad.Protos {
		if !slices.Contains(p.Protos, proto) {
			continue
		}
		slowest, who := math.Inf(1), ""
		for _, c := range b.Report.Cells {
			if c.Scenario == "reused-"+proto && c.Valid && c.RPS.N > 0 && c.RPS.Median > 0 && c.RPS.Median < slowest {
				slowest, who = c.RPS.Median, c.Target
			}
		}
		if who == "" {
			fmt.Fprintf(b.Stderr, "\nequal-load %s: not run, no valid reused-%s cell to take the rate from\n", proto, proto)
			continue
		}
		rates[proto] = max(1, int(slowest*runner.EqualLoadFraction))
		if ceil, ok := p.Ceilings[proto]; ok && ceil < rates[proto] {
			fmt.Fprintf(b.Stderr, "\nequal-load %s: %d req/s for every target: the client's ceiling (make calibrate, run/%s), below %.0f%% of %s's median %.0f req/s, the slowest valid\n",
				proto, ceil, CeilingFile, runner.EqualLoadFraction*100, who, slowest)
			rates[proto] = ceil
			continue
		}
		fmt.Fprintf(b.Stderr, "\nequal-load %s: %d req/s for every target (%.0f%% of %s's median %.0f req/s, the slowest valid)\n",
			proto, rates[proto], runner.EqualLoadFraction*100, who, slowest)
	}
	todo := p.EqualLoadJobs(b.Served, rates)
	b.total = b.done + len(todo) // less what has no rate to run at
	byProto := map[string][]*result.Result{}
	for _, j := range todo {
		if ctx.Err() != nil {
			break
		}
		b.step(j)
		res := b.run(ctx, j.Job)
		if j.Run <= 1 {
			byProto[j.Proto] = append(byProto[j.Proto], res)
		}
	}
	for _, proto := range runner.EqualLoad.Protos {
		if rs := byProto[proto]; len(rs) > 0 {
			report.PrintRuns(b.Stdout, fmt.Sprintf("equal-load %s at %d req/s  (testid %s)", proto, rates[proto], b.TestID), rs)
		}
	}
	return rates
}
