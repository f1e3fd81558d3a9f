package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

type runFlags struct {
	targets, testid, profile string
	extra                    []string
}

func parseRunFlags(fs *flag.FlagSet, args []string) (*runFlags, error) {
	f := &runFlags{}
	fs.StringVar(&f.targets, "targets", envOr("TARGET", "all"), "targets: all (every running one) or a comma-separated list")
	fs.StringVar(&f.testid, "testid", os.Getenv("TESTID"), "tag of this run and name of its results folder (default: a timestamp)")
	fs.StringVar(&f.profile, "profile", envOr("PROFILE", "smoke"), "smoke, stable or stress")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.extra = fs.Args()
	if f.testid == "" {
		f.testid = time.Now().Format("20060102-150405")
	}
	switch f.profile {
	case "smoke", "stable", "stress":
	default:
		return nil, fmt.Errorf("unknown PROFILE %q: valid profiles are smoke, stable, stress", f.profile)
	}
	return f, nil
}

func newRunner(s *stack.Stack, f *runFlags) *runner.Runner {
	return &runner.Runner{
		K6:           filepath.Join(s.Root, "bin", "k6"),
		ScenariosDir: filepath.Join(s.Root, "scenarios"),
		ResultsDir:   envOr("RESULTS_DIR", filepath.Join(s.Root, "results")),
		TargetsFile:  s.TargetsFile,
		CAFile:       stack.CertsIn(filepath.Join(s.RunDir, "certs")).CAFile,
		Profile:      f.profile,
		ExtraArgs:    f.extra,
		Stdout:       os.Stdout,
		Stderr:       os.Stderr,
	}
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
		if r, ok := st.Targets[n]; ok && r.Alive() {
			up = append(up, n)
		} else {
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
			return nil, fmt.Errorf("PROTO applies to probes only; %s names its protocol itself", scenario)
		}
		return []cell{{scenario: scenario}}, nil
	}
	protos := runner.ProbeProtos(scenario)
	if proto != "" {
		if !slices.Contains(protos, proto) {
			return nil, fmt.Errorf("probe %s runs over %s, not %q", scenario, strings.Join(protos, ", "), proto)
		}
		protos = []string{proto}
	}
	return []cell{{scenario: scenario, protos: protos}}, nil
}

// runCells runs each cell against each target and prints its table; it returns every result.
func runCells(ctx context.Context, r *runner.Runner, testid string, cells []cell, targets []string) []*runner.Result {
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
				fmt.Fprintf(os.Stderr, "\n>>> %s %s %s (testid %s)\n", c.scenario, p, t, testid)
				results = append(results, r.Run(ctx, testid, runner.Job{Scenario: c.scenario, Target: t, Proto: p}))
			}
		}
		runner.PrintTable(os.Stdout, fmt.Sprintf("%s  (profile %s, testid %s)", c.scenario, r.Profile, testid), results)
		all = append(all, results...)
	}
	return all
}

// invalidErr turns invalid cells into the command's failure, after the tables are out.
func invalidErr(results []*runner.Result, dir string) error {
	bad := 0
	for _, r := range results {
		if !r.Valid || r.Err != "" {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d cells invalid (see the tables above; results in %s)", bad, len(results), dir)
	}
	fmt.Printf("\nall %d cells valid; results in %s\n", len(results), dir)
	return nil
}

func cmdK6(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("k6", flag.ContinueOnError)
	scenario := fs.String("scenario", os.Getenv("SCENARIO"), "scenario: a file of scenarios/ without .js")
	proto := fs.String("proto", os.Getenv("PROTO"), "probes only: h1, h1c or h2 (default: each)")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return err
	}
	if *scenario == "" {
		return errors.New("no SCENARIO: try `make k6 SCENARIO=fresh-h2`; scenarios are " + strings.Join(scenarioNames(), ", "))
	}
	if !slices.Contains(scenarioNames(), *scenario) {
		return fmt.Errorf("unknown SCENARIO %q: scenarios are %s", *scenario, strings.Join(scenarioNames(), ", "))
	}
	s, err := newStack()
	if err != nil {
		return err
	}
	cells, err := cellsFor(*scenario, *proto)
	if err != nil {
		return err
	}
	targets, err := runningTargets(s, f.targets)
	if err != nil {
		return err
	}
	r := newRunner(s, f)
	results := runCells(ctx, r, f.testid, cells, targets)
	return invalidErr(results, filepath.Join(r.ResultsDir, f.testid))
}

func cmdBench(ctx context.Context, args []string) (err error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return err
	}
	s, err := newStack()
	if err != nil {
		return err
	}
	names, err := s.Config.Select(f.targets)
	if err != nil {
		return err
	}
	if err := s.Up(ctx, names); err != nil {
		return err
	}
	defer func() {
		if derr := s.Down(); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	var cells []cell
	for _, sc := range runner.Throughput {
		cells = append(cells, cell{scenario: sc})
	}
	for _, p := range runner.Probes {
		cells = append(cells, cell{scenario: p.Scenario, protos: p.Protos})
	}
	t0 := time.Now()
	r := newRunner(s, f)
	results := runCells(ctx, r, f.testid, cells, names)
	fmt.Fprintf(os.Stderr, "\nbench: %d cells in %v\n", len(results), time.Since(t0).Round(time.Second))
	printTables(results, f.profile, f.testid)
	return invalidErr(results, filepath.Join(r.ResultsDir, f.testid))
}

// printTables prints every scenario's table again, in matrix order, so one screen holds them.
func printTables(results []*runner.Result, profile, testid string) {
	by := map[string][]*runner.Result{}
	for _, r := range results {
		by[r.Scenario] = append(by[r.Scenario], r)
	}
	fmt.Println("\n######## proxybench results: client, proxies and upstream share this machine's CPUs (see README)")
	for _, sc := range scenarioNames() {
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
	profile, testid := "", filepath.Base(args[0])
	for _, file := range files {
		r, err := runner.LoadResult(file)
		if err != nil {
			return err
		}
		profile = r.Profile
		results = append(results, r)
	}
	printTables(results, profile, testid)
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
