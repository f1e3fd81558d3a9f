package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// TestPinnedStack: `up -pin` starts every thread of every target on its CPU set (the upstream
// on upstream's, the proxies on proxy's), and a later `k6` runs k6 on the client's, with every
// result valid. A 2-CPU machine has room for the client apart from the rest only:
// client=first CPU, proxy and upstream the second.
func TestPinnedStack(t *testing.T) {
	h := harnessAt(t, 200, "nginx")
	avail, err := stack.AvailableCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(avail) < 2 {
		t.Fatalf("pinning needs 2 CPUs at least (client apart), this machine lets us use %v", avail)
	}
	server := strconv.Itoa(avail[len(avail)-1])
	spec := fmt.Sprintf("client=%d,proxy=%s,upstream=%s", avail[0], server, server)
	out, err := h.proxybench(t, "up", "-pin", spec)
	t.Cleanup(func() { h.down(t) })
	if err != nil {
		t.Fatalf("up -pin %s: %v\n%s", spec, err, out)
	}
	st := readState(t, h.run)
	if st.Pin.String() != fmt.Sprintf("client %d, proxy %s, upstream %s", avail[0], server, server) {
		t.Errorf("state pinning %q, want %s", st.Pin.String(), spec)
	}
	for n, r := range st.Targets {
		tasks := treeTasks(r.PID)
		if len(tasks) == 0 {
			t.Errorf("target %s: no task found under pid %d", n, r.PID)
		}
		for _, task := range tasks {
			if got := cpusAllowed(task); got != server {
				t.Errorf("target %s: task %s runs on CPUs %q, want %s", n, task, got, server)
			}
		}
	}

	// k6, while it runs: a child of proxybench named k6, on the client's CPU
	testid := "e2e-pinned"
	cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), "k6", "-scenario", "reused-h1c", "-targets", "all", "-testid", testid)
	cmd.Dir, cmd.Env = h.root, h.env()
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	seen := map[string]string{} // k6 pid → CPUs
	for running := true; running; {
		select {
		case err := <-done:
			running = false
			if err != nil {
				t.Errorf("k6 against the pinned stack: %v\n%s", err, log.String())
			}
		case <-time.After(200 * time.Millisecond):
			for _, pid := range children(cmd.Process.Pid) {
				if comm, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(comm)) == "k6" {
					seen[pid] = cpusAllowed(pid)
				}
			}
		}
	}
	if len(seen) == 0 {
		t.Errorf("never saw k6 run:\n%s", log.String())
	}
	for pid, cpus := range seen {
		if cpus != strconv.Itoa(avail[0]) {
			t.Errorf("k6 (pid %s) ran on CPUs %q, want the client's %d", pid, cpus, avail[0])
		}
	}
	results := loadResults(t, filepath.Join(h.results, testid))
	if len(results) != len(h.cfg.Names()) {
		t.Errorf("%d results, want one per target", len(results))
	}
	for _, r := range results {
		checkResult(t, "reused-h1c", r)
	}
}

// cpusAllowed is a task's Cpus_allowed_list.
func cpusAllowed(task string) string {
	data, _ := os.ReadFile("/proc/" + task + "/status")
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// children are a process's direct children.
func children(pid int) []string {
	var out []string
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		out = append(out, strings.Fields(string(data))...)
	}
	return out
}

// treeTasks are "pid/task/tid" paths of every thread of the process and its descendants.
func treeTasks(pid int) []string {
	var out []string
	todo := []string{strconv.Itoa(pid)}
	for len(todo) > 0 {
		p := todo[0]
		todo = todo[1:]
		tids, _ := filepath.Glob("/proc/" + p + "/task/*")
		for _, tid := range tids {
			out = append(out, p+"/task/"+filepath.Base(tid))
		}
		n, _ := strconv.Atoi(p)
		todo = append(todo, children(n)...)
	}
	return out
}
