package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// warmupGapS is scenarios/lib/options.js's WARMUP_GAP_S: the measured scenario starts this
// long after the warm-up's end.
const warmupGapS = 1.0

// Soak flag limits.
const (
	defaultSoakMinutes = "10"
	// maxSoakMinutes: two hours. k6's memory grows with the requests (k6MeasuredMiBPerMillion):
	// at 7,000 req/s two hours hold some 10 GiB, and a faster machine fills its memory sooner.
	maxSoakMinutes      = 120
	defaultSoakInterval = 10 * time.Second
	minSoakInterval     = time.Second
	maxSoakInterval     = 10 * time.Minute
	// minWindowSamples: the baseline's and the end's windows hold at least this many samples
	// each, so that a median is more than one reading.
	minWindowSamples = 2
)

// Roles of the sampled processes, the keys of soak.json's samples.
const (
	roleK6       = "k6"
	roleTarget   = "target"
	roleUpstream = "upstream"
)

var minutesRE = regexp.MustCompile(`^(\d+(\.\d*)?|\.\d+)$`)

type soakFlags struct {
	*runFlags
	target   string
	minutes  float64
	proto    string
	interval time.Duration
	check    bool
}

// duration is DURATION for the scripts: the minutes as k6 reads them ("0.5m", "10m").
func (f *soakFlags) duration() string {
	return strconv.FormatFloat(f.minutes, 'f', -1, 64) + "m"
}

func parseSoakFlags(args []string) (*soakFlags, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	target := fs.String("target", os.Getenv("TARGET"), "the one target to soak: a name of targets.json, or direct (the upstream alone)")
	minutes := fs.String("minutes", envOr("MINUTES", defaultSoakMinutes), "how long the measured load runs, in minutes (fractions allowed: 0.5)")
	proto := fs.String("proto", envOr("PROTO", "h1c"), "protocol: h1, h1c, h2 or h3 (the reused-<proto> scenario)")
	interval := fs.String("interval", envOr("SOAK_INTERVAL", defaultSoakInterval.String()), "how often RSS and open files are read")
	check := fs.Bool("check", false, "check the flags and the target, then exit (make soak does, before building)")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return nil, err
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if given["targets"] {
		return nil, errors.New("soak runs against one target: -target NAME (make soak TARGET=NAME), not -targets")
	}
	if given["profile"] && f.profile != "stress" {
		return nil, fmt.Errorf("soak runs the stress profile only, not -profile %s: leave -profile out", f.profile)
	}
	f.profile = "stress"
	sf := &soakFlags{runFlags: f, check: *check}

	sf.target = strings.TrimSpace(*target)
	switch {
	case sf.target == "" || sf.target == "all":
		return nil, fmt.Errorf("soak needs one target, got %q: TARGET=NAME, a name of targets.json or direct (the upstream alone); all is not one", sf.target)
	case strings.Contains(sf.target, ","):
		return nil, fmt.Errorf("soak runs against one target, got the list %q: TARGET=NAME, a name of targets.json or direct", sf.target)
	}
	f.targets = sf.target

	m := strings.TrimSpace(*minutes)
	n, err := strconv.ParseFloat(m, 64)
	if !minutesRE.MatchString(m) || err != nil || n <= 0 || n > maxSoakMinutes {
		return nil, fmt.Errorf("MINUTES=%q: want a number of minutes above 0 and at most %d, such as 10 or 0.5 (k6 keeps every request's timings until the end, ~%.0f MiB per million requests)", *minutes, maxSoakMinutes, k6MeasuredMiBPerMillion)
	}
	sf.minutes = n

	sf.proto = strings.TrimSpace(*proto)
	if !slices.Contains(allProtos, sf.proto) {
		return nil, fmt.Errorf("unknown PROTO %q: valid are %s (soak runs reused-<proto>; empty: h1c)", sf.proto, strings.Join(allProtos, ", "))
	}

	iv, err := time.ParseDuration(strings.TrimSpace(*interval))
	if err != nil || iv < minSoakInterval || iv > maxSoakInterval {
		return nil, fmt.Errorf("SOAK_INTERVAL=%q: want a duration from %v to %v such as 10s or 2s", *interval, minSoakInterval, maxSoakInterval)
	}
	sf.interval = iv
	// the baseline's and the end's medians need samples to be medians of
	window := time.Duration(sf.minutes * soakWindowFraction * float64(time.Minute))
	if most := window / minWindowSamples; iv > most {
		return nil, fmt.Errorf("SOAK_INTERVAL=%v is too long for %s minutes: at most %v, so that the first and the last %.0f%% of the run (%v each) hold %d samples each; or soak longer",
			iv, m, most.Truncate(100*time.Millisecond), soakWindowFraction*100, window.Truncate(100*time.Millisecond), minWindowSamples)
	}
	// RUN_TIMEOUT's default counts the DURATION k6 is given: the soak's, not the environment's
	if f.timeout, err = runTimeout(func(k string) string {
		if k == "DURATION" {
			return sf.duration()
		}
		return os.Getenv(k)
	}); err != nil {
		return nil, err
	}
	if d := strings.TrimSpace(os.Getenv("DURATION")); d != "" {
		fmt.Fprintf(os.Stderr, "soak: DURATION=%s is not used: the measured load runs for MINUTES (%s)\n", d, sf.duration())
	}
	return sf, nil
}

// soakReport is results/<testid>/soak.json.
type soakReport struct {
	Schema      int               `json:"schema"`
	TestID      string            `json:"testid"`
	Target      string            `json:"target"`
	Proto       string            `json:"proto"`
	Scenario    string            `json:"scenario"`
	Profile     string            `json:"profile"`
	Minutes     float64           `json:"minutes"`
	IntervalS   float64           `json:"interval_s"`
	Started     time.Time         `json:"started"`
	Processes   []*soakProc       `json:"processes"`
	Samples     []soakSample      `json:"samples"`
	Window      *soakWindow       `json:"measured_window_s,omitempty"` // after the warm-up, in the samples' time
	RPS         float64           `json:"rps,omitempty"`
	Bounds      map[string]any    `json:"bounds"`
	Verdict     []soakVerdict     `json:"verdict,omitempty"`
	Pass        bool              `json:"pass"`
	Result      string            `json:"result,omitempty"` // the k6 result file
	Valid       bool              `json:"k6_valid"`
	Invalid     []string          `json:"k6_invalid,omitempty"`
	Interrupted bool              `json:"interrupted,omitempty"`
	Error       string            `json:"error,omitempty"`
	Resources   *runner.Resources `json:"target_resources,omitempty"`
}

const soakSchema = 1

// save writes soak.json atomically: a reader never sees half of one.
func (r *soakReport) save(path string) error { return stack.WriteJSON(path, r) }

// measuredWindow places the measured scenario in the samples' time, from the k6 result: the
// test ran testRunDurationMs and ended (with its summary) at exit seconds after the k6 run
// began; the measured scenario starts after the warm-up and its gap (options.js).
func measuredWindow(resultPath string, exit float64) (soakWindow, error) {
	data, err := os.ReadFile(resultPath)
	if err != nil {
		return soakWindow{}, err
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
		return soakWindow{}, fmt.Errorf("%s: %w", resultPath, err)
	}
	d := durationSeconds(doc.Config.Duration)
	if d <= 0 || doc.K6.State.TestRunDurationMs <= 0 {
		return soakWindow{}, fmt.Errorf("%s: no duration or test run duration to place the measured window", resultPath)
	}
	warm := 0.0
	if !zeroRE.MatchString(doc.Config.Warmup) {
		warm = durationSeconds(doc.Config.Warmup) + warmupGapS
	}
	start := exit - doc.K6.State.TestRunDurationMs/1000 + warm
	return soakWindow{From: start, To: start + d}, nil
}

func cmdSoak(ctx context.Context, args []string) (err error) {
	f, err := parseSoakFlags(args)
	if err != nil {
		return err
	}
	s, _, err := stackOf(f.target)
	if err != nil {
		return err
	}
	if f.target != stack.Direct {
		// refused before anything starts; the stack's own verification says it again below
		defs, err := s.Definitions([]string{f.target})
		if err != nil {
			return err
		}
		if ps := defs[f.target].Protocols; !slices.Contains(ps, f.proto) {
			return fmt.Errorf("%s does not serve %s: PROTO is one of what it serves, %s", f.target, f.proto, strings.Join(ps, ", "))
		}
	}
	if f.check {
		return nil
	}
	// the upstream: every proxy forwards to it, and it is measured too
	names := []string{stack.Direct}
	if f.target != stack.Direct {
		names = append(names, f.target)
	}
	h, err := hold(ctx, s, "soak", names, f.runFlags)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.down()) }()
	st, sv, r, dir := h.st, h.sv, h.r, h.dir
	if how := sv.missing[f.target]; how != "" {
		return fmt.Errorf("%s is not up: %s", f.target, how)
	}
	if !slices.Contains(sv.protocols[f.target], f.proto) {
		return fmt.Errorf("%s does not serve %s: PROTO is one of what it serves, %s", f.target, f.proto, strings.Join(sv.protocols[f.target], ", "))
	}
	job := runner.Job{Scenario: "reused-" + f.proto, Target: f.target, Env: []string{"PROFILE=stress", "DURATION=" + f.duration()}}
	resultPath, _ := r.ResultPath(f.testid, job)

	procs := []*soakProc{{Role: roleK6, Name: "k6"}}
	if f.target != stack.Direct {
		procs = append(procs, &soakProc{Role: roleTarget, Name: f.target, PID: st.Targets[f.target].PID})
	}
	procs = append(procs, &soakProc{Role: roleUpstream, Name: stack.Direct, PID: st.Targets[stack.Direct].PID})
	rep := &soakReport{
		Schema: soakSchema, TestID: f.testid, Target: f.target, Proto: f.proto, Scenario: job.Scenario,
		Profile: "stress", Minutes: f.minutes, IntervalS: f.interval.Seconds(), Started: time.Now(), Processes: procs,
		Bounds: soakBoundsDoc(), Result: resultPath,
	}
	fmt.Fprintf(os.Stderr, "soak %s: %s against %s for %s minutes (stress profile), RSS and open files every %v\n",
		f.testid, job.Scenario, f.target, strconv.FormatFloat(f.minutes, 'f', -1, 64), f.interval)

	sampler := startSoakSampler(procs, f.interval)
	r.OnStart = sampler.setK6
	res, rs := r.RunSampled(ctx, f.testid, job, st.Targets[f.target].PID)
	exit := time.Since(sampler.t0).Seconds()
	rep.Samples = sampler.Stop()
	rep.Resources = rs
	rep.Valid, rep.Invalid = res.Valid, res.Invalid
	path := filepath.Join(dir, "soak.json")

	if ctx.Err() != nil {
		rep.Interrupted = true
		rep.Error = "interrupted before the end of the run"
		printSoakTable(os.Stdout, rep)
		if err := rep.save(path); err != nil {
			return err
		}
		return fmt.Errorf("interrupted after %d samples (%.0f s): no verdict; the samples so far are in %s", len(rep.Samples), exit, path)
	}
	return rep.conclude(res, resultPath, exit, path)
}

// conclude judges the soak from the k6 run's result (at resultPath, ended exit seconds after
// the sampler started) and the samples, prints the table and saves the report at path. The
// error says every way the soak failed.
func (r *soakReport) conclude(res *runner.Result, resultPath string, exit float64, path string) error {
	var errs []error
	if res.Err != "" || !res.Valid {
		why := res.Err
		if why == "" {
			why = strings.Join(res.Invalid, "; ")
		}
		errs = append(errs, fmt.Errorf("the k6 run is invalid (%s): %s", resultPath, why))
	}
	if w, werr := measuredWindow(resultPath, exit); werr != nil {
		errs = append(errs, fmt.Errorf("no verdict: %w", werr))
	} else {
		r.Window = &w
		if res.RPS != nil {
			r.RPS = *res.RPS
		} else if res.DurationS > 0 {
			r.RPS = res.Requests / res.DurationS
		}
		r.Verdict = judgeSoak(r.Processes, r.Samples, w, r.RPS)
	}
	printSoakTable(os.Stdout, r)
	for _, v := range r.Verdict {
		if !v.OK {
			errs = append(errs, fmt.Errorf("%s (%s) %s: %s", v.Name, v.Role, v.Bound.Metric, soakFigures(v)))
		}
	}
	r.Pass = len(errs) == 0 && len(r.Verdict) > 0
	if len(errs) > 0 {
		r.Error = errors.Join(errs...).Error()
	}
	if err := r.save(path); err != nil {
		errs = append(errs, err)
	}
	fmt.Printf("\nsoak: %s\n", path)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fmt.Printf("soak passed: no process grew beyond its bound\n")
	return nil
}
