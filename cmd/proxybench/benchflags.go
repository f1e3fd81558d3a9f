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
	// sweepModes run only when MODES names them, never in "all", the default bench: idle and
	// connections hold thousands of connections against every target, bodies moves up to 8 MiB
	// a request, minutes each that the default bench does not spend
	sweepModes = []string{"idle", "connections", engine.BodiesMode}
	// the capacity search runs the native open model: h1c, h1 and h2 (h3's client, k6's
	// constant-arrival-rate over k6/x/proxybench/http3, costs more per request than the targets)
	capacityProtos = []string{"h1c", "h1", "h2"}
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
	// idleConnections are the connections the idle mode holds, connectionLevels the
	// connections of each step of the connections sweep
	idleConnections  int
	connectionLevels []int
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
	idle := setting(fs, "idle-connections", "IDLE_CONNECTIONS", "")
	levels := setting(fs, "connection-levels", "CONNECTION_LEVELS", "")
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
	if err := b.searchesSomething(*modes); err != nil {
		return nil, err
	}
	if b.idleConnections, err = strconv.Atoi(strings.TrimSpace(*idle)); err != nil || b.idleConnections < 1 || b.idleConnections > maxConnections {
		return nil, fmt.Errorf("IDLE_CONNECTIONS=%q: want a whole number of connections from 1 to %d (default 10000)", *idle, maxConnections)
	}
	if b.connectionLevels, err = parseLevels(*levels); err != nil {
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

// searchesSomething: MODES naming capacity (modesSpec, as given: not "all", where capacity is
// one default among others) must leave the search a protocol of PROTOS, else the bench would
// end with no capacity and no word of why.
func (b *benchFlags) searchesSomething(modesSpec string) error {
	if !slices.Contains(b.modes, "capacity") || !slices.ContainsFunc(strings.Split(modesSpec, ","), func(m string) bool { return strings.TrimSpace(m) == "capacity" }) {
		return nil
	}
	var both, could []string
	for _, p := range b.protos {
		if slices.Contains(b.capacityProtos, p) {
			both = append(both, p)
		}
		if slices.Contains(capacityProtos, p) {
			could = append(could, p)
		}
	}
	if len(both) > 0 {
		return nil
	}
	fix := "give PROTOS one of h1c, h1, h2 (the search runs the native open model)"
	if len(could) > 0 {
		fix = "give CAPACITY_PROTOS=" + strings.Join(could, ",")
	}
	return fmt.Errorf("MODES names capacity and CAPACITY_PROTOS (%s) names no protocol of PROTOS (%s): nothing would be searched; %s, or leave capacity out of MODES",
		strings.Join(b.capacityProtos, ","), strings.Join(b.protos, ","), fix)
}

// maxConnections bounds IDLE_CONNECTIONS and CONNECTION_LEVELS: past it, the loopback's
// ephemeral ports (28 000 by default) run out before any target's limit is met.
const maxConnections = 25000

// parseLevels parses CONNECTION_LEVELS: connection counts, comma-separated, in rising order.
func parseLevels(spec string) ([]int, error) {
	var out []int
	for _, v := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > maxConnections || len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("CONNECTION_LEVELS=%q: want connection counts from 1 to %d, comma-separated, each above the one before (default 16,64,256,1024,4096)", spec, maxConnections)
		}
		out = append(out, n)
	}
	return out, nil
}

// openFiles is the open-files limit the stack and k6 run with, checked against what the
// modes hold at once: an error before anything starts, never a run that hangs or fails on a
// refused accept.
func (b *benchFlags) openFiles() (stack.OpenFiles, error) {
	of, err := stack.OpenFilesLimit()
	if err != nil {
		return of, err
	}
	if slices.Contains(b.modes, "idle") {
		if err := of.Holds(b.idleConnections, fmt.Sprintf("MODES=idle with IDLE_CONNECTIONS=%d", b.idleConnections)); err != nil {
			return of, err
		}
	}
	if n := len(b.connectionLevels); n > 0 && slices.Contains(b.modes, "connections") {
		if err := of.Holds(b.connectionLevels[n-1], fmt.Sprintf("MODES=connections up to %d connections", b.connectionLevels[n-1])); err != nil {
			return of, err
		}
	}
	return of, nil
}
