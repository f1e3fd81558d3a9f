package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
)

// plan is a soak of nginx for 0.5 minutes, told into out and progress, saved in a temporary
// folder.
func plan(t *testing.T, out, progress *bytes.Buffer) Plan {
	return Plan{
		TestID: "t", Target: "nginx", Proto: "h1c", Minutes: 0.5, Interval: 2 * time.Second,
		Dir: t.TempDir(), Out: out, Progress: progress,
	}
}

func readReport(t *testing.T, path string) Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// conclude judges, prints and saves; its error says every way the soak failed.
func TestConclude(t *testing.T) {
	resultJSON := fmt.Sprintf(`{"schema": %d, "scenario": "reused-h1c", "config": {"duration": "4.8m", "warmup": "0"}, "k6": {"state": {"testRunDurationMs": 290000}}}`, result.Schema)
	rps := 10000.0
	flat := series(
		map[string]func(float64) float64{roleK6: func(float64) float64 { return 100 }, roleTarget: func(float64) float64 { return 20 }, roleUpstream: func(float64) float64 { return 15 }},
		map[string]func(float64) int{roleK6: func(float64) int { return 110 }, roleTarget: func(float64) int { return 220 }, roleUpstream: func(float64) int { return 30 }},
	)
	leaking := series(
		map[string]func(float64) float64{roleK6: func(float64) float64 { return 100 }, roleTarget: func(t float64) float64 { return 20 + t }, roleUpstream: func(float64) float64 { return 15 }},
		map[string]func(float64) int{roleK6: func(float64) int { return 110 }, roleTarget: func(float64) int { return 220 }, roleUpstream: func(float64) int { return 30 }},
	)
	tests := []struct {
		name     string
		res      result.Result
		samples  []Sample
		result   string // the k6 result file; "" for none
		pass     bool
		wantErrs []string // parts of the error
		wantOut  []string // parts of the output
	}{
		{
			"flat passes",
			result.Result{Valid: true, RPS: &rps},
			flat, resultJSON, true, nil,
			[]string{"nginx RSS MiB", "bounds:", "  nginx      RSS  20.0 MiB → 20.0 MiB, +0.0 MiB, within its bound", "soak passed: no process grew beyond its bound"},
		},
		{
			"a leaking target fails",
			result.Result{Valid: true, Requests: 2.9e6, DurationS: 290},
			leaking, resultJSON, false,
			[]string{"nginx (target) rss_mib: 58.0 MiB → 290.0 MiB, +232.0 MiB, beyond its bound of +46.5 MiB"},
			[]string{"  nginx      RSS  58.0 MiB → 290.0 MiB, +232.0 MiB, beyond its bound of +46.5 MiB (+32 MiB + 25% of the baseline)  FAIL"},
		},
		{
			"an invalid k6 run fails",
			result.Result{Invalid: []string{"thresholds failed", "late"}, RPS: &rps},
			flat, resultJSON, false,
			[]string{"the k6 run is invalid (", "): thresholds failed; late"},
			[]string{"  k6         fds"},
		},
		{
			"no result: no verdict",
			result.Result{Err: "k6 exited: exit status 1"},
			flat, "", false,
			[]string{"): k6 exited: exit status 1", "no verdict: open "},
			[]string{"no verdict: "},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			resultPath, path := filepath.Join(dir, "reused-h1c-nginx.json"), filepath.Join(dir, "soak.json")
			if tc.result != "" {
				if err := os.WriteFile(resultPath, []byte(tc.result), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep := &Report{
				Target: "nginx", Proto: "h1c", Scenario: "reused-h1c", Profile: "stress", Minutes: 4.8,
				Processes: []*Process{{Role: roleK6, Name: "k6"}, {Role: roleTarget, Name: "nginx"}, {Role: roleUpstream, Name: "direct"}},
				Samples:   tc.samples, Bounds: boundsDoc(), Result: resultPath,
			}
			var out bytes.Buffer
			err := rep.conclude(&out, &tc.res, resultPath, 300, path)
			if tc.pass != (err == nil) {
				t.Fatalf("error %v, want a pass %v", err, tc.pass)
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q, want it to say %q", err, want)
				}
			}
			for _, want := range append(tc.wantOut, "\nsoak: "+path+"\n") {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the output does not say %q:\n%s", want, out.String())
				}
			}
			saved := readReport(t, path)
			if saved.Pass != tc.pass || (err != nil && saved.Error != err.Error()) {
				t.Errorf("soak.json: pass %v, error %q; want %v, %v", saved.Pass, saved.Error, tc.pass, err)
			}
			if tc.result != "" && (len(saved.Verdict) != 6 || saved.Window == nil || saved.RPS != rps) {
				t.Errorf("soak.json: %d verdicts, window %v, %v req/s; want 6, one, %v", len(saved.Verdict), saved.Window, saved.RPS, rps)
			}
		})
	}
}

// Run follows k6 from its start, the target and the upstream from the first sample, and
// saves what it read whatever became of the k6 run.
func TestRun(t *testing.T) {
	scenarios, err := filepath.Abs(filepath.Join("..", "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	// a k6 that runs for a moment and writes no result
	k6 := filepath.Join(t.TempDir(), "k6")
	if err := os.WriteFile(k6, []byte("#!/bin/sh\nsleep 0.6\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := exec.Command("sleep", "30")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = target.Process.Kill(); _ = target.Wait() }()

	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		wantErr string
		k6Read  bool   // k6 is in the samples
		wantOut string // a part of the output
	}{
		{"a failed k6 run", t.Context(), "the k6 run is invalid", true, "\nsoak: "},
		{"interrupted", canceled, "interrupted after", false, "no verdict: interrupted before the end of the run\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, progress bytes.Buffer
			p := plan(t, &out, &progress)
			p.Interval = 50 * time.Millisecond
			p.TargetPID, p.UpstreamPID = target.Process.Pid, os.Getpid()
			r := &runner.Runner{K6: k6, ScenariosDir: scenarios, ResultsDir: p.Dir, Stdout: &out, Stderr: &out}
			err := Run(tc.ctx, r, p)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if r.OnStart != nil {
				t.Errorf("the runner's OnStart is left set")
			}
			if want := "soak t: reused-h1c against nginx for 0.5 minutes (stress profile), RSS and open files every 50ms\n"; progress.String() != want {
				t.Errorf("progress %q, want %q", progress.String(), want)
			}
			rep := readReport(t, filepath.Join(p.Dir, "soak.json"))
			if len(rep.Processes) != 3 || rep.Processes[1].PID != p.TargetPID || rep.Processes[2].PID != p.UpstreamPID || (rep.Processes[0].PID != 0) != tc.k6Read {
				t.Errorf("soak.json's processes %+v %+v %+v", rep.Processes[0], rep.Processes[1], rep.Processes[2])
			}
			read := map[string]int{}
			for _, s := range rep.Samples {
				for role := range s.Procs {
					read[role]++
				}
			}
			if tc.k6Read && (read[roleK6] == 0 || read[roleTarget] == 0 || read[roleUpstream] == 0) {
				t.Errorf("samples of %v in %d samples, want k6, the target and the upstream", read, len(rep.Samples))
			}
			for _, want := range []string{"nginx RSS MiB", tc.wantOut} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the output does not say %q:\n%s", want, out.String())
				}
			}
		})
	}
}
