package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/stack"
)

type runFlags struct {
	targets, testid, profile string
	load                     scenarios.Profile // the profile's figures
	extra                    []string
	timeout                  time.Duration // of each k6 run (runTimeout)
	client                   string        // CLIENT: runner.ClientNative or runner.ClientK6
}

var testidRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func parseRunFlags(fs *flag.FlagSet, args []string) (*runFlags, error) {
	f := &runFlags{}
	fs.StringVar(&f.targets, "targets", envOr("TARGET", "all"), "targets: all (every running one) or a comma-separated list")
	fs.StringVar(&f.testid, "testid", os.Getenv("TESTID"), "tag of this run and name of its results folder (default: a timestamp)")
	fs.StringVar(&f.profile, "profile", envOr("PROFILE", scenarios.DefaultProfile()), strings.Join(scenarios.ProfileNames(), ", "))
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	f.extra = fs.Args()
	if f.testid == "" {
		f.testid = time.Now().Format("20060102-150405")
	}
	if !testidRE.MatchString(f.testid) {
		// as the scripts check it (scenarios/lib/config.js), before anything runs
		return nil, fmt.Errorf("TESTID %q: letters, digits, \".\", \"_\" or \"-\", 128 at most (it names the results folder)", f.testid)
	}
	var err error
	if f.load, err = scenarios.ProfileNamed(f.profile); err != nil {
		return nil, err
	}
	if err := checkKnobs(os.Getenv); err != nil {
		return nil, err
	}
	// the scripts would aim at TARGET_URL while the runner counts, samples and names the local
	// target: only k6-cloud's MODE=cloud (which runs no local target) takes it
	if u := os.Getenv("TARGET_URL"); u != "" && fs.Name() != "k6-cloud" {
		return nil, fmt.Errorf("TARGET_URL=%s: make %s measures the targets of the local stack; a remote target runs as `bin/k6 run -e TARGET_URL=%s scenarios/<scenario>.js` or `make k6-cloud MODE=cloud`", u, fs.Name(), u)
	}
	if f.timeout, err = runTimeout(os.Getenv); err != nil {
		return nil, err
	}
	if f.client, err = runner.ParseClient(os.Getenv("CLIENT")); err != nil {
		return nil, err
	}
	return f, nil
}

// runSlack is how long a k6 run may take beyond its WARMUP and DURATION before RUN_TIMEOUT
// cuts it off: setup (30 s at most), the 30 s gracefulStop, a fresh run's REQUESTS at the
// slowest rate seen here (50,000 handshakes at ~650/s in stress) and the summary, with room.
const runSlack = 5 * time.Minute

// runTimeout is RUN_TIMEOUT, the time after which a k6 run is stopped as hung ("0": never);
// empty is runSlack plus the DURATION and WARMUP given, which the profiles' own fit within.
func runTimeout(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv("RUN_TIMEOUT"))
	switch {
	case v == "":
		d := runSlack
		for _, k := range durationKnobs {
			if w := strings.TrimSpace(getenv(k)); durationRE.MatchString(w) {
				d += time.Duration(durationSeconds(w) * float64(time.Second))
			}
		}
		return d, nil
	case zeroRE.MatchString(v):
		return 0, nil
	case !durationRE.MatchString(v) || durationSeconds(v) <= 0:
		return 0, fmt.Errorf("RUN_TIMEOUT=%q: want a duration such as 90s or 10m after which a k6 run is stopped as hung, or 0 for never (empty: %v plus DURATION and WARMUP)", v, runSlack)
	}
	return time.Duration(durationSeconds(v) * float64(time.Second)), nil
}

// parseFlags parses args as fs's flags. The flag package prints its own complaint and every
// flag's usage to stderr, above the error main prints last; instead the error alone says what
// is wrong and, for a flag fs does not know, which flags it does.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(os.Stderr)
		fs.PrintDefaults()
		return err
	case strings.HasPrefix(err.Error(), "flag provided but not defined"):
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, "-"+f.Name) })
		return fmt.Errorf("%w: valid flags are %s; k6's own flags go after -- (make: ARGS='…')", err, strings.Join(names, ", "))
	case strings.HasPrefix(err.Error(), "invalid boolean value"):
		return fmt.Errorf("%w: want true or false", err)
	}
	return err
}

// The scenario knobs reach k6 through the environment (Makefile: export DURATION …), and the
// scripts check them (scenarios/lib/config.js). They are checked here too, as the scripts do,
// so that a bad one stops `make k6`, and `make bench` at its flag check (bench -check), before anything starts, instead of
// failing every run of a bench after minutes of setup.
var (
	durationKnobs = []string{"DURATION", "WARMUP"} // WARMUP may be 0
	countKnobs    = []string{"CONNECTIONS", "STREAMS", "REQUESTS", "FRESH_CONNECTIONS", "SAMPLES", "UPLOAD_BYTES"}
	// durationRE and countRE are config.js's DURATION_RE and positiveInt's test, verbatim
	// (TestKnobRulesMatchTheScripts).
	durationRE = regexp.MustCompile(`^(\d+(\.\d+)?(ms|s|m|h))+$`)
	zeroRE     = regexp.MustCompile(`^0+(ms|s|m|h)?$`)
	countRE    = regexp.MustCompile(`^\d+$`)
	// durationPartRE is one number and unit of a duration: 1m30s is 1m and 30s.
	durationPartRE = regexp.MustCompile(`(\d+(?:\.\d+)?)(ms|s|m|h)`)
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, the largest count k6 takes exactly.
const maxSafeInteger = 1<<53 - 1

// checkKnobs checks the scenario knobs getenv returns; empty is the profile's value.
func checkKnobs(getenv func(string) string) error {
	var errs []error
	for _, k := range durationKnobs {
		v := strings.TrimSpace(getenv(k))
		if v == "" || (k == "WARMUP" && zeroRE.MatchString(v)) {
			continue
		}
		if !durationRE.MatchString(v) || durationSeconds(v) <= 0 {
			zero := ""
			if k == "WARMUP" {
				zero = ", or 0 for none"
			}
			errs = append(errs, fmt.Errorf("%s=%q: want a duration longer than zero such as 10s, 1m30s or 500ms%s (empty: the profile's)", k, v, zero))
		}
	}
	for _, k := range countKnobs {
		v := strings.TrimSpace(getenv(k))
		if v == "" {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if !countRE.MatchString(v) || err != nil || n < 1 || n > maxSafeInteger {
			errs = append(errs, fmt.Errorf("%s=%q: want a whole number of at least 1 (empty: the profile's)", k, v))
		}
	}
	return errors.Join(errs...)
}

// durationSeconds is the length of a duration durationRE matched, as config.js's seconds().
func durationSeconds(v string) float64 {
	units := map[string]float64{"ms": 0.001, "s": 1, "m": 60, "h": 3600}
	total := 0.0
	for _, m := range durationPartRE.FindAllStringSubmatch(v, -1) {
		n, _ := strconv.ParseFloat(m[1], 64)
		total += n * units[m[2]]
	}
	return total
}

// newRunner runs k6 for the stack s, pinned as s is (s.Pin).
func newRunner(s *stack.Stack, f *runFlags) *runner.Runner {
	r := &runner.Runner{
		K6:           filepath.Join(s.Root, "bin", "k6"),
		ScenariosDir: filepath.Join(s.Root, "scenarios"),
		ResultsDir:   envPath("RESULTS_DIR", filepath.Join(s.Root, "results")),
		TargetsFile:  s.TargetsFile,
		CAFile:       stack.CertsIn(filepath.Join(s.RunDir, "certs")).CAFile,
		Profile:      f.profile,
		ExtraArgs:    f.extra,
		Timeout:      f.timeout,
		Client:       f.client,
		UpstreamAddr: net.JoinHostPort(s.Config.Address, strconv.Itoa(s.Config.Upstream.H1C)),
		Stdout:       os.Stdout,
		Stderr:       os.Stderr,
	}
	if s.Pin != nil {
		r.ClientPrefix, r.ClientCPUs = s.Pin.Wrap(stack.RoleClient, nil), s.Pin.Client
	}
	if st, err := s.LoadState(); err == nil {
		r.Negotiated = st.Negotiated()
	}
	if p, err := stack.NewProber(s.Config.Hostname, s.Config.Address, r.CAFile); err == nil {
		r.OfferedStreams = func(ctx context.Context, target string, proto stack.Protocol) (float64, error) {
			n, err := p.OfferedStreams(ctx, proto, proto.Port(s.Config.Targets[target]))
			if err != nil {
				return 0, fmt.Errorf("target %s: %w", target, err)
			}
			return float64(n), nil
		}
	}
	return r
}

// runningTargets resolves -targets against what is up: a benchmark of a target that is down
// would only measure connection refusals.
func runningTargets(s *stack.Stack, spec string) ([]string, error) {
	st, err := s.LoadState()
	if err != nil {
		return nil, err
	}
	names, err := s.Config.Select(spec)
	if err != nil {
		return nil, err
	}
	var up, down []string
	for _, n := range names {
		switch {
		case st.IsUp(n):
			up = append(up, n)
		case st.Missing[n] != "":
			// A target that is not up still gets its row, saying why ("install failed", …).
			up = append(up, n)
		default:
			down = append(down, n)
		}
	}
	if len(up) == 0 {
		return nil, errors.New("no target is up: run `make up` first (or `make bench`, which brings the stack up and down itself)")
	}
	if spec != "all" && spec != "" && len(down) > 0 {
		return nil, fmt.Errorf("target %s is not up: run `make up TARGETS=%s`", strings.Join(down, ", "), strings.Join(names, ","))
	}
	return up, nil
}

// cell is one scenario over its protocols against every target, as one table.
type cell struct {
	scenario string
	protos   []string // probes only
}

func cellsFor(scenario, proto string) ([]cell, error) {
	if !runner.IsProbe(scenario) {
		if proto != "" {
			var probes []string
			for _, p := range runner.Probes {
				probes = append(probes, p.Scenario)
			}
			return nil, fmt.Errorf("PROTO=%s: PROTO applies to the probes only (%s); %s names its protocol itself: leave PROTO empty", proto, strings.Join(probes, ", "), scenario)
		}
		return []cell{{scenario: scenario}}, nil
	}
	protos := runner.ProbeProtos(scenario)
	if proto != "" {
		if !slices.Contains(protos, proto) {
			return nil, fmt.Errorf("unknown PROTO %q for probe %s: valid are %s (empty: each)", proto, scenario, strings.Join(protos, ", "))
		}
		protos = []string{proto}
	}
	return []cell{{scenario: scenario, protos: protos}}, nil
}

// served is what the stack's state says of each target: the protocols it serves (state.json
// `protocols`: its definition's, each verified by a probe at start), or why it is missing.
type served struct {
	protocols map[string][]string
	missing   map[string]string
}

func servedProtocols(s *stack.Stack) (served, error) {
	st, err := s.LoadState()
	if err != nil {
		return served{}, err
	}
	return servedBy(st), nil
}

// servedBy is what st says each target serves, and which are missing and why.
func servedBy(st *stack.State) served {
	// a copy: a bench adds to it the targets that died and would not start again
	sv := served{protocols: map[string][]string{}, missing: maps.Clone(st.Missing)}
	if sv.missing == nil {
		sv.missing = map[string]string{}
	}
	for n, r := range st.Targets {
		for _, p := range r.Protocols {
			sv.protocols[n] = append(sv.protocols[n], string(p))
		}
	}
	return sv
}

// runCells runs each cell against each target and prints its table; it returns every result.
// A cell needing a protocol its target does not serve (h3 on Pingora) is not run: it is
// recorded as skipped ("no h3") and shown as such, never left out of the table.
func runCells(ctx context.Context, r *runner.Runner, testid string, cells []cell, targets []string, sv served) []*runner.Result {
	var all []*runner.Result
	for _, c := range cells {
		var results []*runner.Result
		protos := c.protos
		if len(protos) == 0 {
			protos = []string{""}
		}
		for _, t := range targets {
			for _, p := range protos {
				if ctx.Err() != nil {
					return all
				}
				job := runner.Job{Scenario: c.scenario, Target: t, Proto: p}
				if how := sv.missing[t]; how != "" {
					results = append(results, r.SkipMissing(testid, job, how))
					continue
				}
				if need := runner.Requires(job); !slices.Contains(sv.protocols[t], need) {
					fmt.Fprintf(os.Stderr, "\n>>> %s %s %s: not run, %s does not serve %s\n", c.scenario, p, t, t, need)
					results = append(results, r.Skip(testid, job, sv.protocols[t]))
					continue
				}
				fmt.Fprintf(os.Stderr, "\n>>> %s %s %s (testid %s)\n", c.scenario, p, t, testid)
				results = append(results, r.RunSegments(ctx, testid, job, r.Segments))
			}
		}
		runner.PrintTable(os.Stdout, fmt.Sprintf("%s  (profile %s, testid %s)", c.scenario, r.Profile, testid), results)
		all = append(all, results...)
	}
	return all
}

// invalidErr turns invalid cells into the command's failure, after the tables are out. Skipped
// cells (a protocol the target does not serve) are neither valid nor invalid: they are counted
// apart.
func invalidErr(results []*runner.Result, dir string) error {
	bad, skipped := 0, 0
	for _, r := range results {
		switch {
		case r.Err != "":
			bad++
		case r.Skipped != "":
			skipped++
		case !r.Valid:
			bad++
		}
	}
	run := len(results) - skipped
	notRun := ""
	if skipped > 0 {
		notRun = fmt.Sprintf("; %d not run: their target does not serve the protocol or is not up", skipped)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d cells invalid%s (see the tables above; results in %s)", bad, run, notRun, dir)
	}
	fmt.Printf("\nall %d cells valid%s; results in %s\n", run, notRun, dir)
	return nil
}

func cmdK6(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("k6", flag.ContinueOnError)
	scenario, proto := cellFlags(fs)
	segs := fs.String("segments", os.Getenv("SEGMENTS"), "k6 instances the run is split over, each an execution segment, merged into one result (default 1)")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return err
	}
	cells, err := k6Cells(*scenario, *proto)
	if err != nil {
		return err
	}
	segments, err := runner.ParseSegments(*segs)
	if err != nil {
		return err
	}
	if err := runner.CheckSegments(strings.TrimSpace(*scenario), segments); err != nil {
		return err
	}
	return runOnStack(ctx, f, cells, func(r *runner.Runner) { r.Segments = segments })
}

// runOnStack runs cells against the targets of the running stack that f names, with a runner
// set up by how, and prints their tables: what make k6 and make k6-cloud MODE=local do.
func runOnStack(ctx context.Context, f *runFlags, cells []cell, how func(*runner.Runner)) error {
	s, err := newStack()
	if err != nil {
		return err
	}
	targets, err := runningTargets(s, f.targets)
	if err != nil {
		return err
	}
	sv, err := servedProtocols(s)
	if err != nil {
		return err
	}
	st, err := s.LoadState()
	if err != nil {
		return err
	}
	s.Pin = st.Pin // the client goes where `make up PIN=…` left room for it
	r := newRunner(s, f)
	// every run sampled, so that its result says whether the machine was busy beside it; the
	// upstream's CPU is the runs' own, not outside load
	r.UpstreamPID = st.Targets[stack.Direct].PID
	r.TargetPIDs = map[string]int{}
	for n, t := range st.Targets {
		r.TargetPIDs[n] = t.PID
	}
	how(r)
	results := runCells(ctx, r, f.testid, cells, targets, sv)
	return invalidErr(results, filepath.Join(r.ResultsDir, f.testid))
}

// cellFlags are the flags that name what a k6 command runs: SCENARIO and, for probes, PROTO.
func cellFlags(fs *flag.FlagSet) (scenario, proto *string) {
	scenario = fs.String("scenario", os.Getenv("SCENARIO"), "scenario: a file of scenarios/ without .js")
	proto = fs.String("proto", os.Getenv("PROTO"), "probes only: h1, h1c, h2 or h3 (default: each the probe runs over)")
	return scenario, proto
}

// k6Cells checks SCENARIO and PROTO, before the stack is read: what `make k6` runs.
func k6Cells(scenario, proto string) ([]cell, error) {
	scenario, proto = strings.TrimSpace(scenario), strings.TrimSpace(proto)
	if scenario == "" {
		return nil, errors.New("no SCENARIO: try `make k6 SCENARIO=fresh-h2`; scenarios are " + strings.Join(scenarioNames(), ", "))
	}
	if !slices.Contains(scenarioNames(), scenario) {
		return nil, fmt.Errorf("unknown SCENARIO %q: scenarios are %s", scenario, strings.Join(scenarioNames(), ", "))
	}
	return cellsFor(scenario, proto)
}

// printTables prints every scenario's table again, in matrix order, so one screen holds them.
func printTables(results []*runner.Result, profile, testid string) {
	by := map[string][]*runner.Result{}
	for _, r := range results {
		by[r.Scenario] = append(by[r.Scenario], r)
	}
	fmt.Println("\n######## proxybench results: client, proxies and upstream share this machine's CPUs (report/README.md)")
	for _, sc := range append(scenarioNames(), runner.EqualLoad.Scenario) {
		if rs := by[sc]; len(rs) > 0 {
			runner.PrintTable(os.Stdout, fmt.Sprintf("%s  (profile %s, testid %s)", sc, profile, testid), rs)
		}
	}
}

func cmdTable(_ context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: proxybench table results/<testid>")
	}
	files, err := filepath.Glob(filepath.Join(args[0], "*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no results in %s", args[0])
	}
	sort.Strings(files)
	var results []*runner.Result
	var unread []string
	profile, testid := "", filepath.Base(args[0])
	for _, file := range files {
		if filepath.Base(file) == report.BenchFile {
			continue // the bench's own record: its runs are the files beside it
		}
		r, err := runner.LoadResult(file)
		if err != nil {
			// one file that is no result (a note, k6's --summary-export) hides no other
			unread = append(unread, err.Error())
			continue
		}
		profile = r.Profile
		results = append(results, r)
	}
	if len(results) == 0 {
		return fmt.Errorf("no result file in %s:\n%s", args[0], strings.Join(unread, "\n"))
	}
	printTables(results, profile, testid)
	for _, u := range unread {
		fmt.Fprintf(os.Stderr, "table: left out %s\n", u)
	}
	return nil
}

// scenarioNames is the matrix order: throughput first, then the probes.
func scenarioNames() []string {
	names := append([]string{}, runner.Throughput...)
	for _, p := range runner.Probes {
		names = append(names, p.Scenario)
	}
	return names
}
