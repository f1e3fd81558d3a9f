package engine

import (
	"slices"
	"strconv"

	"github.com/proxybench/proxybench/runner"
)

// A Plan is what a bench runs: the matrix of the targets over the protocols and modes, each
// throughput cell Runs times, then, with the reused mode, the equal-load pass.
type Plan struct {
	Targets []string
	Protos  []string // h1, h1c, h2, h3
	Modes   []string // reused, fresh, probe, capacity, idle, connections
	Runs    int      // per throughput cell
	// Ceilings are the client's open-model ceilings by protocol (make calibrate): the
	// equal-load pass never runs above them, nor the capacity search.
	Ceilings map[string]int
	// CapacityProtos are the protocols of the capacity search (with the capacity mode), and
	// CapacityP99 its latency goal in ms.
	CapacityProtos []string
	CapacityP99    float64
	// Connections is the profile's CONNECTIONS: the equal-load pool a capacity step widens
	// over HTTP/1.1 when its rate needs more (capacityConnections).
	Connections int
	// ConnectionLevels are the connections of each step of the connections sweep (with the
	// connections mode), in rising order.
	ConnectionLevels []int
	// BodySizes are the body-size sweep's sizes in bytes (BODY_SIZES), when Modes has it.
	BodySizes []int
}

// capacity tells whether the plan searches each target's capacity.
func (p Plan) capacity() bool {
	return slices.Contains(p.Modes, "capacity") && len(p.CapacityProtos) > 0
}

// A Job is one k6 run of the plan.
type Job struct {
	runner.Job
	Runs int // of its cell
}

// Matrix is the plan's matrix, in order: throughput (each Runs times), the probes (once: a
// probe repeats SAMPLES times within its run), then the idle runs (once per target and
// protocol), then the body-size sweep (bodyJobs). A scenario's runs are interleaved across the
// targets (A B C A B C, never A A B B C C), so that a drift of the machine over minutes (a
// neighbour's load, heat, the page cache) spreads over every target instead of landing on one.
func (p Plan) Matrix() []Job {
	var jobs []Job
	for _, sc := range runner.Throughput {
		if !slices.Contains(p.Modes, sc.Mode) || !slices.Contains(p.Protos, runner.JobOf(sc, "", "").Requires()) {
			continue
		}
		for run := 1; run <= p.Runs; run++ {
			for _, t := range p.Targets {
				j := runner.JobOf(sc, t, "")
				j.Run = run
				jobs = append(jobs, Job{Job: j, Runs: p.Runs})
			}
		}
	}
	if slices.Contains(p.Modes, "probe") {
		for _, pr := range runner.Probes {
			for _, t := range p.Targets {
				for _, proto := range pr.Protos {
					if slices.Contains(p.Protos, proto) {
						jobs = append(jobs, Job{Job: runner.JobOf(pr, t, proto), Runs: 1})
					}
				}
			}
		}
	}
	if slices.Contains(p.Modes, "idle") {
		for _, proto := range runner.Idle.Protos {
			if !slices.Contains(p.Protos, proto) {
				continue
			}
			for _, t := range p.Targets {
				j := runner.JobOf(runner.Idle, t, proto)
				j.Env = append(j.Env, sweepEnv("idle", proto))
				jobs = append(jobs, Job{Job: j, Runs: 1})
			}
		}
	}
	return append(jobs, p.bodyJobs()...)
}

// equalLoad tells whether the plan has an equal-load pass.
func (p Plan) equalLoad() bool {
	return slices.Contains(p.Modes, "reused")
}

// EqualLoadJobs are the equal-load runs: per protocol of the pass that is among Protos, every
// target that serves it (no row for one that does not: the matrix's tables already say so),
// Runs times, interleaved across the targets as the matrix is. With rates nil, every such
// protocol (to count them before the matrix ran); else only those with a rate.
func (p Plan) EqualLoadJobs(sv Served, rates map[string]int) []Job {
	var jobs []Job
	for _, proto := range runner.EqualLoad.Protos {
		rate, ok := rates[proto]
		if !slices.Contains(p.Protos, proto) || (rates != nil && !ok) {
			continue
		}
		for run := 1; run <= p.Runs; run++ {
			for _, t := range p.Targets {
				if !sv.Serves(t, proto) {
					continue
				}
				j := runner.JobOf(runner.EqualLoad, t, proto)
				j.Run, j.Env = run, []string{"RATE=" + strconv.Itoa(rate)}
				jobs = append(jobs, Job{Job: j, Runs: p.Runs})
			}
		}
	}
	return jobs
}
