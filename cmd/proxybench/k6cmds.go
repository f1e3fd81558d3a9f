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

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// newRunner runs k6 for the stack s as f says.
func newRunner(s *stack.Stack, f *runFlags) (*runner.Runner, error) {
	return engine.NewRunner(s, runnerOptions(s, f))
}

// runnerOptions are what f sets of a runner, here or against a stack on another host.
func runnerOptions(s *stack.Stack, f *runFlags) engine.RunnerOptions {
	return engine.RunnerOptions{
		ResultsDir: envPath("RESULTS_DIR", filepath.Join(s.Root, "results")),
		Profile:    f.profile, ExtraArgs: f.extra, Timeout: f.timeout, Client: f.client,
	}
}

func cmdK6(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("k6", flag.ContinueOnError)
	scenario, proto := cellFlags(fs)
	segs := setting(fs, "segments", "SEGMENTS", "")
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
func runOnStack(ctx context.Context, f *runFlags, cells []engine.Cell, how func(*runner.Runner)) error {
	s, err := newStack()
	if err != nil {
		return err
	}
	rs, err := remoteOf(ctx, s)
	if err != nil {
		return err
	}
	var targets []string
	var st *stack.State
	var r *runner.Runner
	if rs != nil {
		defer rs.Agent.Close()
		if targets, err = remoteTargets(rs, s, f.targets); err != nil {
			return err
		}
		st, r = &rs.State.State, rs.Runner(s, runnerOptions(s, f))
	} else {
		if targets, err = engine.RunningTargets(s, f.targets); err != nil {
			return err
		}
		if st, err = s.LoadState(); err != nil {
			return err
		}
		s.Pin = st.Pin // the client goes where `make up PIN=…` left room for it
		if r, err = newRunner(s, f); err != nil {
			return err
		}
	}
	// every run sampled, so that its result says whether the machine (both, apart) was busy
	// beside it; the upstream's CPU is the runs' own, not outside load
	if d := st.Targets[stack.Direct]; d != nil {
		r.UpstreamPID = d.PID
	}
	r.TargetPIDs = map[string]int{}
	for n, t := range st.Targets {
		r.TargetPIDs[n] = t.PID
	}
	how(r)
	c := engine.Cells{
		TestID: f.testid, Profile: r.Profile, Runner: r, Segments: r.Segments,
		Served: engine.ServedBy(st), Stdout: os.Stdout, Stderr: os.Stderr,
	}
	results := c.Run(ctx, cells, targets)
	return engine.Validity(os.Stdout, results, filepath.Join(r.ResultsDir, f.testid))
}

// cellFlags are the flags that name what a k6 command runs: SCENARIO and, for probes, PROTO.
func cellFlags(fs *flag.FlagSet) (scenario, proto *string) {
	scenario = setting(fs, "scenario", "SCENARIO", "")
	proto = setting(fs, "proto", "PROTO", "")
	return scenario, proto
}

// k6Cells checks SCENARIO and PROTO, before the stack is read: what `make k6` runs.
func k6Cells(scenario, proto string) ([]engine.Cell, error) {
	scenario, proto = strings.TrimSpace(scenario), strings.TrimSpace(proto)
	// the matrix's, and the body-size sweep's at one size (BODY_BYTES, default 1 MiB)
	names := append(engine.Scenarios(), engine.BodiesScenarios()...)
	if scenario == "" {
		return nil, errors.New("no SCENARIO: try `make k6 SCENARIO=fresh-h2`; scenarios are " + strings.Join(names, ", "))
	}
	if !slices.Contains(names, scenario) {
		return nil, fmt.Errorf("unknown SCENARIO %q: scenarios are %s", scenario, strings.Join(names, ", "))
	}
	return engine.CellsFor(scenario, proto)
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
	var results []*result.Result
	var unread []string
	profile, testid := "", filepath.Base(args[0])
	for _, file := range files {
		if filepath.Base(file) == report.BenchFile {
			continue // the bench's own record: its runs are the files beside it
		}
		r, err := result.LoadResult(file)
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
	engine.PrintTables(os.Stdout, results, profile, testid)
	for _, u := range unread {
		fmt.Fprintf(os.Stderr, "table: left out %s\n", u)
	}
	return nil
}
