package calibrate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/proxybench/proxybench/runner"
)

// The open-model ladder of `make calibrate`: the client's p99 unloaded (at ceilingUnloaded
// req/s), then rates from ceilingFirst, doubled while the client holds them, up to ceilingLast.
const (
	ceilingUnloaded = 200
	ceilingFirst    = 1000
	ceilingLast     = 128000
	// CeilingP99Factor is how far the p99 may rise over the unloaded one at a rate still held.
	CeilingP99Factor = 2
)

// Ceiling is the highest open-model (equal-load) rate the client holds against a target over
// a protocol: the target is direct, the upstream alone, so what it cannot hold is the
// client's (and the machine's) limit. A rate is held when the run is valid, nothing was due on
// a busy connection beyond the open model's margin (no overload), and its p99 is within
// CeilingP99Factor of the unloaded p99.
type Ceiling struct {
	Target      string       `json:"target"`
	Proto       string       `json:"proto"`
	UnloadedP99 float64      `json:"unloaded_p99_ms"`
	Rate        int          `json:"rate"` // 0: not even the first rate was held
	Steps       []SearchStep `json:"steps"`
	Err         string       `json:"error,omitempty"`
}

// OpenCeiling climbs the ladder with the equal-load scenario (the native open model on h1c, h1
// and h2, on connections kept-alive connections: the bench's pool) against target, each rate for
// seconds after a 1 s warm-up, and bisects once between the last rate held and the first not
// held.
func OpenCeiling(ctx context.Context, r *runner.Runner, testid, target, proto string, pid, seconds, connections int) *Ceiling {
	step := 0
	try := func(rate int) (float64, string) {
		step++
		fmt.Fprintf(r.Stderr, "calibrate: open-model ceiling %s %s at %d req/s\n", proto, target, rate)
		j := runner.JobOf(runner.EqualLoad, target, proto)
		j.Run, j.Env = step, []string{
			"RATE=" + strconv.Itoa(rate), "DURATION=" + strconv.Itoa(seconds) + "s", "WARMUP=1s",
			"CONNECTIONS=" + strconv.Itoa(connections),
		}
		res, _ := r.RunSampled(ctx, testid, j, pid)
		switch {
		case res.Err != "":
			return 0, res.Err
		case !res.Valid:
			return res.Latency.P99, fmt.Sprintf("invalid: %v", res.Invalid)
		case res.Overload != "":
			return res.Latency.P99, res.Overload
		}
		return res.Latency.P99, ""
	}
	c := climb(try, func() bool { return ctx.Err() != nil })
	c.Target, c.Proto = target, proto
	return c
}

// climb is the ladder: try runs a rate and says its p99 and why it was not sustained ("" when
// it was); stop tells it to stop climbing (an interrupt).
func climb(try func(rate int) (p99 float64, why string), stop func() bool) *Ceiling {
	c := &Ceiling{}
	// the unloaded run is only the reference p99, so a request behind schedule in it does not
	// end the ladder; a stall in it raises that p99 and loosens the ladder above it, so the
	// table shows it and calibrate is run on a quiet machine
	p99, why := try(ceilingUnloaded)
	if why != "" && (p99 <= 0 || !strings.HasPrefix(why, "could not sustain")) {
		c.Err = fmt.Sprintf("unloaded at %d req/s: %s", ceilingUnloaded, why)
		return c
	}
	c.UnloadedP99 = p99
	// doubled to the top of the ladder, then one bisection between the last held and the
	// first not (a precision of a half); the first rate not held is the answer's floor
	ladder := Search{First: ceilingFirst, Ceiling: ceilingLast, Factor: 2, Precision: 0.5, Floor: ceilingFirst}
	found := ladder.Run(func(rate int) SearchStep {
		p99, why := try(rate)
		if why == "" && p99 > CeilingP99Factor*c.UnloadedP99 {
			why = fmt.Sprintf("p99 %.3f ms over %d× the unloaded %.3f ms", p99, CeilingP99Factor, c.UnloadedP99)
		}
		return SearchStep{P99: p99, Why: why}
	}, stop)
	c.Rate, c.Steps = found.Rate, found.Steps
	return c
}
