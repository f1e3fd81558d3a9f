package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
)

// BodiesMode is MODES' name of the body-size sweep: not in the default modes (it runs only when
// named), its runs after the matrix's.
const BodiesMode = scenarios.Bodies

// BodiesScenarios are the body-size sweep's scenarios: make k6 runs one at one size.
func BodiesScenarios() []string {
	var names []string
	for _, s := range runner.Bodies {
		names = append(names, s.Name)
	}
	return names
}

// MaxBodyBytes is the largest size of the sweep: the upstream's /bytes and upload limit.
const MaxBodyBytes = 8 * result.MiB

// ParseBodySizes reads BODY_SIZES: a comma-separated list of sizes (bytes, KiB or MiB), each
// from 0 to MaxBodyBytes, in the order given, each once.
func ParseBodySizes(spec string) ([]int, error) {
	var sizes []int
	for part := range strings.SplitSeq(spec, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		n, err := result.ParseSize("BODY_SIZES", part)
		if err != nil {
			return nil, err
		}
		if n > MaxBodyBytes {
			return nil, fmt.Errorf("BODY_SIZES: %s is over %s, the largest body the upstream serves and takes", strings.TrimSpace(part), result.SizeLabel(MaxBodyBytes))
		}
		if !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("BODY_SIZES=%q names no size: give a comma-separated list such as 0,1KiB,64KiB,1MiB,8MiB", spec)
	}
	return sizes, nil
}

// bodyJobs are the body-size sweep's runs: per scenario of the sweep (downloads, then uploads),
// per protocol of Protos it runs over, per size, every target in turn (A B C A B C, as the
// matrix interleaves them), each point once. A point is one closed-model run at the profile's
// CONNECTIONS, DURATION and WARMUP: RUNS of each would multiply a sweep that is already
// sizes × directions × protocols × targets runs long.
func (p Plan) bodyJobs() []Job {
	if !slices.Contains(p.Modes, BodiesMode) {
		return nil
	}
	var jobs []Job
	for _, sc := range runner.Bodies {
		dir := result.Download
		if sc.Route == "/upload" {
			dir = result.Upload
		}
		for _, proto := range sc.Protos {
			if !slices.Contains(p.Protos, proto) {
				continue
			}
			for _, n := range p.BodySizes {
				for _, t := range p.Targets {
					j := runner.JobOf(sc, t, proto)
					j.Body = &result.Body{Direction: dir, Bytes: float64(n)}
					j.Env = append(j.Env, sweepEnv("bodies", proto, strconv.Itoa(n), dir))
					jobs = append(jobs, Job{Job: j, Runs: 1})
				}
			}
		}
	}
	return jobs
}
