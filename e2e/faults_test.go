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
// would) makes that run invalid with the end of its log, is started again for its next runs,
// and the bench goes on; the upstream dying stops the bench, saying so. Either way nothing of
// the stack is left running and the runs before it are in the report.
func TestBenchSurvivesATargetDying(t *testing.T) {
	for _, tc := range []struct {
		name, victim string
		offset       int
		wantOut      []string
	}{
		{"proxy dies", "nginx", 1150, []string{"nginx (pid ", "exited during the run", "nginx started again (pid "}},
		{"upstream dies", stack.Direct, 1250, []string{"the upstream (direct, pid ", "the bench stopped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := harnessAt(t, tc.offset, "nginx")
			testid := "e2e-fault-" + strings.ReplaceAll(tc.name, " ", "-")
			cmd, out := h.startBench(t, "-targets", "nginx", "-protos", "h1c", "-modes", "reused", "-runs", "2", "-testid", testid)

			// nginx's first run, past its warm-up: kill the victim's process group
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
			if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill %s's group %d: %v", tc.victim, pid, err)
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
			if first.Valid || !strings.Contains(strings.Join(first.Invalid, " "), "exited during the run; the end of ") {
				t.Errorf("nginx run 1 (its target killed): valid %v, invalid %q: want invalid, saying who exited and the end of its log", first.Valid, first.Invalid)
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
