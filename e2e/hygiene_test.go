package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/stack"
)

// A controller stopped in the middle of `up` leaves nothing of ours running: killed outright
// (kill -9), `make down` stops what it started from the state it wrote as each process started;
// interrupted (Ctrl-C, SIGTERM), it stops them itself. A second controller on the same run
// directory is told who holds it instead of starting twins.
func TestControllerStoppedMidUp(t *testing.T) {
	h := harnessAt(t, 950, "nginx,caddy")

	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		down bool // make down needed afterwards
	}{
		{"kill -9, then make down", syscall.SIGKILL, true},
		{"Ctrl-C", syscall.SIGINT, false},
		{"SIGTERM", syscall.SIGTERM, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), "up")
			cmd.Dir, cmd.Env = h.root, h.env()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.down(t) })
			// mid-up: the upstream has started, the proxies are yet to come or starting
			deadline := time.Now().Add(30 * time.Second)
			for !stateNames(h.run, stack.Direct) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatal("up recorded no upstream in state.json within 30 s")
				}
				time.Sleep(10 * time.Millisecond)
			}
			midUp := !stateNames(h.run, "nginx", "caddy")
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if !midUp {
				// the state must list the upstream as it starts, not once all are ready
				t.Fatalf("state.json listed every target before %s: up was over, not in the middle", tc.name)
			}
			if tc.down {
				// what the killed controller started runs on, and only its state says what
				if left := processesUnder(h.run); len(left) == 0 {
					t.Fatal("nothing of the stack runs after kill -9: the controller was killed before it started anything, or stopped what it started")
				}
				if out, err := h.proxybench(t, "down"); err != nil {
					t.Fatalf("down after kill -9: %v\n%s", err, out)
				}
			}
			// every process of the stack runs in a directory under the run directory
			deadline = time.Now().Add(15 * time.Second)
			for left := processesUnder(h.run); len(left) > 0; left = processesUnder(h.run) {
				if time.Now().After(deadline) {
					t.Fatalf("processes of the stack still running 15 s after %s: %v", tc.name, left)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if out, err := h.proxybench(t, "status"); err != nil || strings.Contains(out, " ok") {
				t.Errorf("status after %s: %v, want every target down:\n%s", tc.name, err, out)
			}
		})
	}

	t.Run("second controller", func(t *testing.T) {
		// the test holds the run directory as a bench would
		s := &stack.Stack{Paths: stack.Paths{RunDir: h.run}}
		unlock, err := s.Lock("bench")
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		out, err := h.proxybench(t, "up")
		want := "is in use by `proxybench bench` (pid " + strconv.Itoa(os.Getpid())
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("up while a bench holds the run directory: %v, want it to say %q:\n%s", err, want, out)
		}
		if left := processesUnder(h.run); len(left) > 0 {
			t.Errorf("the refused up started %v", left)
		}
	})
}

// stateNames tells whether the stack's state.json lists every name given.
func stateNames(runDir string, names ...string) bool {
	data, err := os.ReadFile(filepath.Join(runDir, "state.json"))
	if err != nil {
		return false
	}
	for _, n := range names {
		if !strings.Contains(string(data), `"`+n+`"`) {
			return false
		}
	}
	return true
}

// processesUnder lists the processes (pid: command) whose working directory is dir or below:
// every target of a stack runs in run/<name>.
func processesUnder(dir string) []string {
	var out []string
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, c := range cwds {
		wd, err := os.Readlink(c)
		if err != nil || (wd != dir && !strings.HasPrefix(wd, dir+"/")) {
			continue
		}
		pid := filepath.Base(filepath.Dir(c))
		comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
		out = append(out, pid+": "+strings.TrimSpace(string(comm)))
	}
	return out
}

// Ctrl-C or SIGTERM at any point of a bench after `up` (a k6 run of the matrix, one of the
// equal-load pass, after the last run: the report, the stack going down) stops k6, the stack and
// the bench, frees every port, says where the partial results are, and keeps them: the report
// rebuilds from them. (Mid-`up`: TestControllerStoppedMidUp; mid-install: the next test.)
func TestBenchInterrupted(t *testing.T) {
	h := harnessAt(t, 1050, "nginx")
	// k6 is running, and the bench is past want in its output
	k6After := func(want string) func(string, []int, int) bool {
		return func(out string, tree []int, _ int) bool {
			return strings.Contains(out, want) && runsCommand(tree, "k6")
		}
	}
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		ready  func(out string, tree []int, results int) bool // polled; nil: at the line onLine
		onLine string                                         // signal as soon as the bench writes it
		want   string
	}{
		// the second run: the first cell's result is on disk, the second is being measured (its
		// progress line, not the first result file: the first k6 writes that file before it
		// exits, and on a busy machine is still running when the file is seen)
		{"mid k6 run", syscall.SIGINT, func(out string, tree []int, results int) bool {
			return results >= 1 && k6After("\n[2/4] ")(out, tree, results)
		}, "", "interrupted at run 2 of 4 (that run is not measured)"},
		{"kill -9 mid k6 run then make down", syscall.SIGKILL, func(out string, tree []int, results int) bool {
			return results >= 1 && k6After("\n[2/4] ")(out, tree, results)
		}, "", ""},
		{"equal-load pass", syscall.SIGTERM, k6After("equal-load h1c: "), "", "interrupted at run 3 of 4 (that run is not measured)"},
		{"after the last run", syscall.SIGINT, nil, "\nbench: 4 runs in ", "interrupted after its last run, while the report was written or the stack stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testid := "e2e-signal-" + strings.ReplaceAll(tc.name, " ", "-")
			cmd, out := h.startBench(t, "-targets", "nginx", "-protos", "h1c", "-modes", "reused", "-runs", "1", "-testid", testid)
			var tree []int
			if tc.onLine != "" {
				out.onLine(tc.onLine, func() {
					tree = processTree(cmd.Process.Pid)
					_ = cmd.Process.Signal(tc.sig)
				})
			} else {
				deadline := time.Now().Add(2 * time.Minute)
				for {
					files, _ := filepath.Glob(filepath.Join(h.results, testid, "*.json"))
					tree = processTree(cmd.Process.Pid)
					if tc.ready(out.String(), tree, len(files)) {
						break
					}
					if time.Now().After(deadline) {
						_ = cmd.Process.Kill()
						t.Fatalf("not at %s within 2 min:\n%s", tc.name, out.String())
					}
					time.Sleep(50 * time.Millisecond)
				}
				if err := cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("bench still running 2 min after it started, signalled at %s:\n%s", tc.name, out.String())
			}
			if err == nil {
				t.Errorf("an interrupted bench exited 0: it must not pass for a finished one")
			}
			dir := filepath.Join(h.results, testid)
			if tc.sig == syscall.SIGKILL {
				// nothing said; k6 went with the controller, the stack runs on until make down
				if out, err := h.proxybench(t, "down"); err != nil {
					t.Fatalf("down after kill -9: %v\n%s", err, out)
				}
				h.assertAllGone(t, tc.sig, cmd.Process.Pid, tree)
				b, err := report.Load(dir)
				if err != nil || len(b.Cells) == 0 || len(b.Cells[0].Runs) == 0 || b.Cells[0].Runs[0].Resources == nil {
					t.Fatalf("bench.json after kill -9 mid-run: %v; want the run that ended before it, with its resources", err)
				}
				if out, err := h.proxybench(t, "report", dir); err != nil {
					t.Errorf("report of the killed bench: %v\n%s", err, out)
				}
				return
			}
			t.Logf("bench after %v: %v\n%s", tc.sig, err, stack.LastLines(out.String(), 6))
			if !strings.Contains(out.String(), tc.want) || !strings.Contains(out.String(), dir) {
				t.Errorf("bench does not say %q and where its partial results are (%s):\n%s", tc.want, dir, out.String())
			}
			h.assertAllGone(t, tc.sig, cmd.Process.Pid, tree)
			if out, err := h.proxybench(t, "report", dir); err != nil {
				t.Errorf("report of the interrupted bench: %v\n%s", err, out)
			}
		})
	}
}

// Ctrl-C while `make bench` installs a proxy (its build running, a step of which ignores
// SIGTERM) ends the install and everything it started within seconds, records no failure
// against the target, starts nothing, and says so.
func TestBenchInterruptedMidInstall(t *testing.T) {
	h := harnessAt(t, 1650, stack.Direct)
	const slow = "slowinstall"
	t.Setenv("PROXYBENCH_CACHE", t.TempDir()) // the failure it must not record is not the user's
	proxies := t.TempDir()
	copyHelpers(t, filepath.Join(h.root, "proxies"), proxies)
	writeFile(t, filepath.Join(proxies, slow, "target.json"), `{
  "config": "none.tmpl",
  "command": ["proxybench-test-slowinstall"],
  "version": ["proxybench-test-slowinstall", "-v"],
  "install": "install.sh",
  "protocols": ["h1c"]
}`)
	writeFile(t, filepath.Join(proxies, slow, "none.tmpl"), "")
	marker := strconv.Itoa(40000 + os.Getpid()%20000)
	writeFile(t, filepath.Join(proxies, slow, "install.sh"), `#!/usr/bin/env bash
echo "building slowinstall: a long compile"
(trap '' TERM; sleep `+marker+`.5) &
sleep `+marker+`
`)
	t.Setenv("PROXYBENCH_PROXIES", proxies)
	h.addTargets(t, 60, slow)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd, out := h.startBench(t, "-targets", slow, "-modes", "reused", "-testid", "e2e-signal-install")
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(out.String(), "a long compile") || len(sleepsOf(marker)) < 2 {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("the install did not start within a minute:\n%s", out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		tree := processTree(cmd.Process.Pid)
		t0 := time.Now()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		took := time.Since(t0)
		t.Logf("bench after %v mid-install, %v later: %v\n%s", sig, took.Round(time.Millisecond), err, stack.LastLines(out.String(), 3))
		if err == nil || took > 10*time.Second {
			t.Errorf("%v mid-install: exit %v after %v, want a failure within 10 s", sig, err, took)
		}
		if want := "target " + slow + ": install (proxies/" + slow + "/install.sh) interrupted: every process it started is stopped"; !strings.Contains(out.String(), want) {
			t.Errorf("%v mid-install: the bench does not say %q:\n%s", sig, want, out.String())
		}
		h.assertAllGone(t, sig, cmd.Process.Pid, tree)
		if left := sleepsOf(marker); len(left) > 0 {
			t.Errorf("%v mid-install: the install's processes %v still run", sig, left)
		}
		if status, _ := h.proxybench(t, "status"); !statusLine(status, slow, "not installed") || strings.Contains(status, "install failed") {
			t.Errorf("%v mid-install: status must show %s not installed, not failed:\n%s", sig, slow, status)
		}
	}
}

// sleepsOf is the pids of live `sleep MARKER…` processes.
func sleepsOf(marker string) []int {
	var pids []int
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		argv, _ := os.ReadFile(c)
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(c), "stat"))
		if err != nil || !strings.HasPrefix(string(argv), "sleep\x00"+marker) || strings.Contains(string(stat), ") Z ") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(c)))
		pids = append(pids, pid)
	}
	return pids
}

// assertAllGone fails unless, within 15 s of sig, no process of tree (the bench's, bench pid
// aside) nor of the stack runs and every port of the stack is free.
func (h *harness) assertAllGone(t *testing.T, sig syscall.Signal, bench int, tree []int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var alive []int
		for _, pid := range tree {
			if syscall.Kill(pid, 0) == nil && pid != bench {
				alive = append(alive, pid)
			}
		}
		left := processesUnder(h.run)
		if len(alive) == 0 && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after %v still alive: pids %v of the bench's tree, stack processes %v", sig, alive, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, n := range h.cfg.Names() {
		for _, p := range h.cfg.Targets[n].TCP() {
			if err := stack.CheckPortFree(h.cfg.Address, p.Port); err != nil {
				t.Errorf("after %v: %v", sig, err)
			}
		}
	}
}

// runsCommand tells whether one of pids runs the command comm (/proc/PID/comm).
func runsCommand(pids []int, comm string) bool {
	for _, pid := range pids {
		c, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err == nil && strings.TrimSpace(string(c)) == comm {
			return true
		}
	}
	return false
}

// startBench starts `proxybench bench args…` in the background, its output gathered in out,
// and brings the stack down at the end of the test whatever the bench did.
func (h *harness) startBench(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), append([]string{"bench"}, args...)...)
	cmd.Dir, cmd.Env = h.root, h.env()
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.down(t) })
	return cmd, out
}

// syncBuffer is output a test reads while the command still writes it.
type syncBuffer struct {
	mu     sync.Mutex
	buf    strings.Builder
	line   string // onLine's
	onSeen func()
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.onSeen != nil && strings.Contains(b.buf.String(), b.line) {
		// at once, from the writer: the command is a few instructions past writing it
		b.onSeen()
		b.onSeen = nil
	}
	return n, err
}

// onLine calls f (once) as soon as the output holds s.
func (b *syncBuffer) onLine(s string, f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.line, b.onSeen = s, f
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Two users' stacks, each with its own run directory and ports, run side by side: both come
// up, measure at once, and one going down leaves the other up and measuring.
func TestTwoStacksSideBySide(t *testing.T) {
	a := harnessAt(t, 1750, "nginx")
	b := harnessAt(t, 1850, "nginx")
	a.up(t)
	b.up(t)
	var wg sync.WaitGroup
	for _, h := range []*harness{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := h.proxybench(t, "k6", "-scenario", "reused-h1c", "-targets", "nginx", "-testid", "e2e-side-by-side"); err != nil {
				t.Errorf("k6 on the stack in %s, beside the other: %v\n%s", h.run, err, out)
			}
		}()
	}
	wg.Wait()
	if out, err := a.proxybench(t, "down"); err != nil {
		t.Fatalf("down of the first stack: %v\n%s", err, out)
	}
	if out, err := b.proxybench(t, "status"); err != nil || !statusLine(out, "nginx", "h1c ok") || !statusLine(out, stack.Direct, "h1c ok") {
		t.Errorf("the second stack after the first went down: %v\n%s", err, out)
	}
	if out, err := b.proxybench(t, "k6", "-scenario", "json", "-targets", "nginx", "-proto", "h2", "-testid", "e2e-side-by-side-after"); err != nil {
		t.Errorf("k6 on the second stack after the first went down: %v\n%s", err, out)
	}
}
