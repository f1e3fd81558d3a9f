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

// Ctrl-C in the middle of a bench's k6 run stops k6, the stack and the bench, frees every port,
// says where the partial results are, and keeps them: the report rebuilds from them.
func TestBenchInterruptedMidRun(t *testing.T) {
	h := harnessAt(t, 1050, "nginx")
	const testid = "e2e-ctrl-c"
	cmd, out := h.startBench(t, "-targets", "nginx", "-protos", "h1c", "-modes", "reused", "-testid", testid)

	// the second k6 run: the first cell's result is on disk, the second is being measured
	var tree []int
	deadline := time.Now().Add(90 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(h.results, testid, "*.json"))
		tree = processTree(cmd.Process.Pid)
		if len(files) >= 1 && runsCommand(tree, "k6") {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no second k6 run within 90 s:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("bench still running 60 s after Ctrl-C:\n%s", out.String())
	}
	if err == nil {
		t.Errorf("an interrupted bench exited 0: it must not pass for a finished one")
	}
	dir := filepath.Join(h.results, testid)
	t.Logf("bench after Ctrl-C: %v\n%s", err, stack.LastLines(out.String(), 15))
	if !strings.Contains(out.String(), "interrupted") || !strings.Contains(out.String(), dir) {
		t.Errorf("bench does not say it was interrupted and where its partial results are (%s):\n%s", dir, out.String())
	}
	deadline = time.Now().Add(15 * time.Second)
	for {
		var alive []int
		for _, pid := range tree {
			if syscall.Kill(pid, 0) == nil && pid != cmd.Process.Pid {
				alive = append(alive, pid)
			}
		}
		left := processesUnder(h.run)
		if len(alive) == 0 && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after Ctrl-C still alive: pids %v of the bench's tree, stack processes %v", alive, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, n := range h.cfg.Names() {
		for _, p := range h.cfg.Targets[n].TCP() {
			if err := stack.CheckPortFree(h.cfg.Address, p.Port); err != nil {
				t.Errorf("after Ctrl-C: %v", err)
			}
		}
	}
	if out, err := h.proxybench(t, "report", dir); err != nil {
		t.Errorf("report of the interrupted bench: %v\n%s", err, out)
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
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
