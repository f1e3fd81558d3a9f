package soak

import (
	"fmt"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/settings"
)

// warmupGapS is scenarios/lib/options.js's WARMUP_GAP_S: the measured scenario starts this
// long after the warm-up's end.
const warmupGapS = 1.0

// Window is the measured part of the run, in seconds after the k6 run began.
type Window struct {
	From, To float64
}

// baseline and end are the windows whose medians are compared.
func (w Window) baseline() Window {
	return Window{w.From, w.From + windowFraction*(w.To-w.From)}
}

func (w Window) end() Window {
	return Window{w.To - windowFraction*(w.To-w.From), w.To}
}

func (w Window) holds(t float64) bool { return t >= w.From && t <= w.To }

// measuredWindow places the measured scenario in the samples' time, from the k6 result: the
// test ran testRunDurationMs and ended (with its summary) at exit seconds after the k6 run
// began; the measured scenario starts after the warm-up and its gap (options.js).
func measuredWindow(resultPath string, exit float64) (Window, error) {
	r, err := result.LoadResult(resultPath)
	if err != nil {
		return Window{}, err
	}
	duration, _ := r.Config["duration"].(string)
	warmup, _ := r.Config["warmup"].(string)
	d := settings.Seconds(duration)
	if d <= 0 || r.K6 == nil || r.K6.State.TestRunDurationMs <= 0 {
		return Window{}, fmt.Errorf("%s: no duration or test run duration to place the measured window", resultPath)
	}
	warm := 0.0
	if !settings.ZeroRE.MatchString(warmup) {
		warm = settings.Seconds(warmup) + warmupGapS
	}
	start := exit - r.K6.State.TestRunDurationMs/1000 + warm
	return Window{From: start, To: start + d}, nil
}
