package e2e

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/stack"
)

// A target that dies in the middle of its run (its whole process group killed, as a crash
// would) or hangs (stopped: k6's own bound would be its 30 s gracefulStop, RUN_TIMEOUT cuts it
// sooner) makes that run invalid with the end of its log, is started again for its next runs,
// and the bench goes on; the upstream dying or hanging stops the bench, saying so. Either way nothing of
// the stack is left running and the runs before it are in the report.
func TestBenchSurvivesATargetDying(t *testing.T) {
	for _, tc := range []struct {
		name, victim string
		offset       int
		signal       syscall.Signal
		env          []string
		wantOut      []string
		wantInvalid  string
	}{
		{
			"proxy dies", "nginx", 1150, syscall.SIGKILL, nil,
			[]string{"nginx (pid ", "exited during the run", "nginx started again (pid "},
			"exited during the run; the end of ",
		},
		{
			"proxy hangs", "nginx", 1550, syscall.SIGSTOP,
			[]string{"RUN_TIMEOUT=15s"},
			[]string{"had not ended after RUN_TIMEOUT=15s and was stopped", "nginx (pid ", "was stopped (SIGSTOP", "nginx started again (pid "},
			"was stopped (SIGSTOP or a tracer: state T) during the run; the end of ",
		},
		{
			"upstream dies", stack.Direct, 1250, syscall.SIGKILL, nil,
			[]string{"the upstream (direct, pid ", "the bench stopped"},
			"exited during the run; the end of ",
		},
		{
			"upstream hangs", stack.Direct, 1950, syscall.SIGSTOP,
			[]string{"RUN_TIMEOUT=15s"},
			[]string{"the upstream (direct, pid ", "was stopped (SIGSTOP", "the bench stopped"},
			"was stopped (SIGSTOP or a tracer: state T) during the run; the end of ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			h := harnessAt(t, tc.offset, "nginx")
			testid := "e2e-fault-" + strings.ReplaceAll(tc.name, " ", "-")
			cmd, out := h.startBench(t, "-targets", "nginx", "-protos", "h1c", "-modes", "reused", "-runs", "2", "-testid", testid)

			// nginx's first run, past its warm-up: signal the victim's process group
			deadline := time.Now().Add(90 * time.Second)
			for !strings.Contains(out.String(), "reused-h1c h1c nginx run 1/2") {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("nginx's first run did not start within 90 s:\n%s", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(1500 * time.Millisecond)
			pid := readState(t, h.run).Targets[tc.victim].PID
			t0 := time.Now()
			if err := syscall.Kill(-pid, tc.signal); err != nil {
				t.Fatalf("%v to %s's group %d: %v", tc.signal, tc.victim, pid, err)
			}
			if tc.signal == syscall.SIGSTOP {
				// should the bench fail to, its cleanup must not wait on a stopped group
				t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
			}

			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(3 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("bench did not end within 3 min of %s's death:\n%s", tc.victim, out.String())
			}
			if err == nil {
				t.Errorf("bench exited 0 with a run its target did not survive")
			}
			t.Logf("the bench ended %v after the signal (%v)", time.Since(t0).Round(time.Second), tc.signal)
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("bench does not say %q:\n%s", w, out.String())
				}
			}
			if left := processesUnder(h.run); len(left) > 0 {
				t.Errorf("after the bench: %v still running", left)
			}

			b, err := report.Load(filepath.Join(h.results, testid))
			if err != nil {
				t.Fatalf("the runs before the death are not saved: %v\n%s", err, out.String())
			}
			var nginx *report.Cell
			for i, c := range b.Cells {
				if c.Scenario == "reused-h1c" && c.Target == "nginx" {
					nginx = &b.Cells[i]
				}
			}
			if nginx == nil || len(nginx.Runs) == 0 {
				t.Fatalf("no reused-h1c nginx cell in bench.json: %+v", b.Cells)
			}
			first := nginx.Runs[0]
			if first.Valid || !strings.Contains(strings.Join(first.Invalid, " "), tc.wantInvalid) {
				t.Errorf("nginx run 1 (its target sent %v): valid %v, invalid %q: want invalid, saying %q", tc.signal, first.Valid, first.Invalid, tc.wantInvalid)
			}
			if tc.victim == stack.Direct {
				if len(nginx.Runs) != 1 {
					t.Errorf("runs after the upstream died: %d nginx runs, want the bench stopped after the first", len(nginx.Runs))
				}
				return
			}
			if len(nginx.Runs) != 2 || !nginx.Runs[1].Valid {
				t.Errorf("nginx run 2, on the restarted nginx: %+v, want it run and valid", nginx.Runs[1:])
			}
		})
	}
}
