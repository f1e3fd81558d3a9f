package soak

import (
	"encoding/json"
	"fmt"
	"os"

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
	data, err := os.ReadFile(resultPath)
	if err != nil {
		return Window{}, err
	}
	var doc struct {
		Config struct {
			Duration string `json:"duration"`
			Warmup   string `json:"warmup"`
		} `json:"config"`
		K6 struct {
			State struct {
				TestRunDurationMs float64 `json:"testRunDurationMs"`
			} `json:"state"`
		} `json:"k6"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return Window{}, fmt.Errorf("%s: %w", resultPath, err)
	}
	d := settings.Seconds(doc.Config.Duration)
	if d <= 0 || doc.K6.State.TestRunDurationMs <= 0 {
		return Window{}, fmt.Errorf("%s: no duration or test run duration to place the measured window", resultPath)
	}
	warm := 0.0
	if !settings.ZeroRE.MatchString(doc.Config.Warmup) {
		warm = settings.Seconds(doc.Config.Warmup) + warmupGapS
	}
	start := exit - doc.K6.State.TestRunDurationMs/1000 + warm
	return Window{From: start, To: start + d}, nil
}
