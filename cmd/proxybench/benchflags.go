package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/settings"
	"github.com/proxybench/proxybench/stack"
)

var (
	allProtos = []string{"h1", "h1c", "h2", "h3"}
	allModes  = []string{"reused", "fresh", "probe", "capacity"}
	// the capacity search runs the native open model: h1c, h1 and h2 (h3's client, k6's
	// constant-arrival-rate over k6/x/proxybench/http3, costs more per request than the targets)
	capacityProtos = []string{"h1c", "h1", "h2"}
	// sweepModes run only when MODES names them: not part of "all", the default bench
	sweepModes = []string{engine.BodiesMode}
)

type benchFlags struct {
	*runFlags
	protos, modes []string
	runs          int
	dashboard     bool
	restart       bool
	pin           *stack.Pinning
	check         bool  // only check the flags and targets
	calibrate     int   // seconds per client of the calibration at the start; 0: none
	bodySizes     []int // MODES=bodies: the sizes of the body-size sweep (BODY_SIZES)
	// capacityP99 is the capacity search's latency goal (ms), capacityProtos its protocols
	capacityP99    float64
	capacityProtos []string
}

// listFlag parses a comma-separated list whose every entry must be one of valid.
func listFlag(name, spec string, valid []string) ([]string, error) {
	return listFlagOf(name, spec, valid, nil)
}

// listFlagOf parses a comma-separated list whose every entry must be one of all or of more;
// empty and "all" are all, without more.
func listFlagOf(name, spec string, all, more []string) ([]string, error) {
	valid := append(slices.Clone(all), more...)
	if spec == "" || spec == "all" {
		return all, nil
	}
	var out []string
	for _, v := range strings.Split(spec, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if v == "all" {
			return nil, fmt.Errorf("%s=%q: all stands alone, not in a list: valid are all, or a comma-separated list of %s", name, spec, strings.Join(valid, ", "))
		}
		if !slices.Contains(valid, v) {
			return nil, fmt.Errorf("unknown %s %q: valid are all, or a comma-separated list of %s", name, v, strings.Join(valid, ", "))
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s=%q names nothing: valid are all, or a comma-separated list of %s", name, spec, strings.Join(valid, ", "))
	}
	return out, nil
}

func parseBenchFlags(args []string) (*benchFlags, error) {
	dashOn, err := settings.On("DASHBOARD", os.Getenv("DASHBOARD"))
	if err != nil {
		return nil, err
	}
	restartOn, err := settings.On("RESTART", os.Getenv("RESTART"))
	if err != nil {
		return nil, err
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	protos := setting(fs, "protos", "PROTOS", "")
	modes := setting(fs, "modes", "MODES", "")
	bodySizes := setting(fs, "body-sizes", "BODY_SIZES", "")
	runs := setting(fs, "runs", "RUNS", "")
	dash := fs.Bool("dashboard", dashOn, "keep k6's web dashboard HTML export of every run")
	pin := pinFlag(fs)
	restart := fs.Bool("restart", restartOn, "restart the target before each of its runs, so that no run inherits another's state")
	check := fs.Bool("check", false, "check the flags and targets, then exit (make bench does, before setup)")
	calibrate := setting(fs, "calibrate-seconds", "CALIBRATE_SECONDS", strconv.Itoa(benchCalibrateSeconds))
	goal := setting(fs, "capacity-p99", "CAPACITY_P99", "")
	capProtos := setting(fs, "capacity-protos", "CAPACITY_PROTOS", "")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return nil, err
	}
	b := &benchFlags{runFlags: f, dashboard: *dash, restart: *restart, runs: f.load.Runs, check: *check}
	if b.protos, err = listFlag("PROTOS", *protos, allProtos); err != nil {
		return nil, err
	}
	if b.modes, err = listFlagOf("MODES", *modes, allModes, sweepModes); err != nil {
		return nil, err
	}
	if b.bodySizes, err = engine.ParseBodySizes(*bodySizes); err != nil {
		return nil, err
	}
	if b.pin, err = parsePin(*pin); err != nil {
		return nil, err
	}
	if b.calibrate, err = strconv.Atoi(strings.TrimSpace(*calibrate)); err != nil || b.calibrate != 0 && (b.calibrate < 2 || b.calibrate > 60) {
		return nil, fmt.Errorf("CALIBRATE_SECONDS=%q: want 0 (no calibration) or a whole number of seconds from 2 to 60", *calibrate)
	}
	if b.capacityP99, err = strconv.ParseFloat(strings.TrimSpace(*goal), 64); err != nil || b.capacityP99 <= 0 || b.capacityP99 > 60000 {
		return nil, fmt.Errorf("CAPACITY_P99=%q: want the latency goal in ms, a number above 0 and at most 60000 (default 10)", *goal)
	}
	spec := *capProtos
	if spec == "" {
		spec = f.load.CapacityProtos // the profile's
	}
	if b.capacityProtos, err = listFlag("CAPACITY_PROTOS", spec, capacityProtos); err != nil {
		return nil, err
	}
	if *runs != "" {
		n, err := strconv.Atoi(strings.TrimSpace(*runs))
		if err != nil || n < 1 || n > 100 {
			return nil, fmt.Errorf("RUNS=%q: want a whole number from 1 to 100 (runs per throughput cell; empty: the profile's, smoke 1, stable 5, stress 3)", *runs)
		}
		b.runs = n
	}
	return b, nil
}
