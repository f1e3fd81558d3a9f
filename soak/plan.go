// Package soak runs the stress profile's reused scenario against one target for many minutes,
// follows the memory and open descriptors of k6, the target and the upstream while it runs,
// and fails when one grows beyond its bound (verdict.go): `proxybench soak`, `make soak`.
package soak

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Limits of a soak's length and sampling.
const (
	DefaultMinutes = 10
	// MaxMinutes: two hours. k6's memory grows with the requests (k6MeasuredMiBPerMillion):
	// at 7,000 req/s two hours hold some 10 GiB, and a faster machine fills its memory sooner.
	MaxMinutes      = 120
	DefaultInterval = 10 * time.Second
	MinInterval     = time.Second
	MaxInterval     = 10 * time.Minute
	// minWindowSamples: the baseline's and the end's windows hold at least this many samples
	// each, so that a median is more than one reading.
	minWindowSamples = 2
)

// Plan is one soak: what runs, for how long, what is followed and where it is told.
type Plan struct {
	TestID   string
	Target   string        // a name of targets.json, or direct (the upstream alone)
	Proto    string        // h1, h1c, h2 or h3: the reused-<proto> scenario runs
	Minutes  float64       // of measured load (ParseLength)
	Interval time.Duration // between two readings (ParseLength)
	// TargetPID is the target's process (the upstream's when the target is direct), and
	// UpstreamPID the upstream's: both are up, and followed, before Run starts.
	TargetPID, UpstreamPID int
	Dir                    string    // the run's results folder, where soak.json is written
	Out                    io.Writer // the table, the verdict and soak.json's path
	Progress               io.Writer // what starts, before the minutes of load
}

// scenario is the k6 scenario a soak runs.
func (p *Plan) scenario() string { return "reused-" + p.Proto }

// Duration is DURATION for the scripts: the minutes as k6 reads them ("0.5m", "10m").
func Duration(minutes float64) string { return minutesText(minutes) + "m" }

func minutesText(minutes float64) string { return strconv.FormatFloat(minutes, 'f', -1, 64) }

var minutesRE = regexp.MustCompile(`^(\d+(\.\d*)?|\.\d+)$`)

// ParseMinutes checks MINUTES, as given: a number of minutes above 0 (fractions, no exponent)
// and at most MaxMinutes.
func ParseMinutes(minutes string) (float64, error) {
	m := strings.TrimSpace(minutes)
	n, err := strconv.ParseFloat(m, 64)
	if !minutesRE.MatchString(m) || err != nil || n <= 0 || n > MaxMinutes {
		return 0, fmt.Errorf("MINUTES=%q: want a number of minutes above 0 and at most %d, such as 10 or 0.5 (k6 keeps every request's timings until the end, ~%.0f MiB per million requests)", minutes, MaxMinutes, k6MeasuredMiBPerMillion)
	}
	return n, nil
}

// ParseInterval checks SOAK_INTERVAL, as given, for a soak of minutes (MINUTES as given, which
// ParseMinutes accepted; its error repeats them as they were written): from MinInterval to
// MaxInterval, and short enough for the baseline's and the end's windows to hold
// minWindowSamples each.
func ParseInterval(interval, minutes string) (time.Duration, error) {
	iv, err := time.ParseDuration(strings.TrimSpace(interval))
	if err != nil || iv < MinInterval || iv > MaxInterval {
		return 0, fmt.Errorf("SOAK_INTERVAL=%q: want a duration from %v to %v such as 10s or 2s", interval, MinInterval, MaxInterval)
	}
	m := strings.TrimSpace(minutes)
	n, err := strconv.ParseFloat(m, 64)
	if err != nil {
		return 0, fmt.Errorf("SOAK_INTERVAL=%v: MINUTES=%q: %w", iv, minutes, err)
	}
	// the baseline's and the end's medians need samples to be medians of
	window := time.Duration(n * windowFraction * float64(time.Minute))
	if most := window / minWindowSamples; iv > most {
		return 0, fmt.Errorf("SOAK_INTERVAL=%v is too long for %s minutes: at most %v, so that the first and the last %.0f%% of the run (%v each) hold %d samples each; or soak longer",
			iv, m, most.Truncate(100*time.Millisecond), windowFraction*100, window.Truncate(100*time.Millisecond), minWindowSamples)
	}
	return iv, nil
}
