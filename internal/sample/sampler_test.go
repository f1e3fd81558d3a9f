package sample

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as one process of a test tree (see TestMain).
const helperEnv = "PROXYBENCH_RESOURCES_HELPER"

// helperSpec is what one helper process does: start its child (if any), wait DelayMS, burn
// BurnMS of its own CPU time, then hold (sleep) HoldMS and exit. Burning is counted in CPU
// time (getrusage), not wall time, so that a busy machine only makes it slower, not smaller.
type helperSpec struct {
	ChildDelayMS int         `json:"child_delay_ms"` // wait before starting the child
	DelayMS      int         `json:"delay_ms"`
	BurnMS       int         `json:"burn_ms"`
	HoldMS       int         `json:"hold_ms"`
	Child        *helperSpec `json:"child,omitempty"`
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		runHelper(spec)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runHelper(raw string) {
	var s helperSpec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		os.Exit(3)
	}
	reaped := make(chan struct{})
	time.Sleep(time.Duration(s.ChildDelayMS) * time.Millisecond)
	if s.Child != nil {
		child := helperCmd(*s.Child)
		if err := child.Start(); err != nil {
			os.Exit(4)
		}
		// Reaped as soon as it exits: no zombie lingers in the tree.
		go func() { _ = child.Wait(); close(reaped) }()
	} else {
		close(reaped)
	}
	time.Sleep(time.Duration(s.DelayMS) * time.Millisecond)
	burn(time.Duration(s.BurnMS) * time.Millisecond)
	time.Sleep(time.Duration(s.HoldMS) * time.Millisecond)
	<-reaped
}

// burn spins until this process used d of CPU time.
func burn(d time.Duration) {
	if d <= 0 {
		return
	}
	start := cpuTime()
	x := 1.0
	for cpuTime()-start < d {
		for i := 0; i < 100000; i++ {
			x = math.Sqrt(x + float64(i))
		}
	}
	_ = x
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func helperCmd(s helperSpec) *exec.Cmd {
	raw, _ := json.Marshal(s)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(raw))
	return cmd
}

// startTree starts a helper tree in its own process group and stops it (by that group, which
// is its root's pid) when the test ends.
func startTree(t *testing.T, s helperSpec) *exec.Cmd {
	t.Helper()
	cmd := helperCmd(s)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
	})
	return cmd
}

// waitProcs waits until the tree under root has had n processes for 50 ms. Not the first
// sight of n: Go's first process start in a helper forks a child that exits at once (the
// runtime's pidfd check), and counting it would end the wait before the helper's own child ran.
func waitProcs(t *testing.T, root, n int) {
	t.Helper()
	var since time.Time
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var stats map[int]procStat
		var kids map[int][]int
		if !hasChildrenFiles() {
			stats, kids = scanProc()
		}
		switch {
		case len(walk(root, stats, kids)) < n:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= 50*time.Millisecond:
			return
		}
	}
	t.Fatalf("the tree under pid %d never had %d processes", root, n)
}

func TestSamplerCountsTheWholeTree(t *testing.T) {
	t.Parallel()
	// root idle → child burns 300 ms → grandchild burns 300 ms: all of it is the tree's, none
	// of it the root's own.
	cmd := startTree(t, helperSpec{HoldMS: 8000, Child: &helperSpec{
		DelayMS: 400, BurnMS: 300, HoldMS: 6000,
		Child: &helperSpec{DelayMS: 400, BurnMS: 300, HoldMS: 5000},
	}})
	waitProcs(t, cmd.Process.Pid, 3)
	s, err := startSampler(cmd.Process.Pid, 0, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitTreeCPU(t, s, 0.6)
	r := s.Stop()
	t.Logf("%+v", r)
	if r.TargetCPUSeconds < 0.55 || r.TargetCPUSeconds > 1.5 {
		t.Errorf("tree CPU = %.3f s, want ≈ 0.6 (two 300 ms burns below the root)", r.TargetCPUSeconds)
	}
	if r.TargetProcs != 3 {
		t.Errorf("processes seen = %d, want 3", r.TargetProcs)
	}
	if r.RSSPeakMB <= 0 || r.RSSMeanMB <= 0 || r.RSSMeanMB > r.RSSPeakMB {
		t.Errorf("RSS peak %.2f MiB, mean %.2f MiB: want 0 < mean ≤ peak", r.RSSPeakMB, r.RSSMeanMB)
	}
	if r.Samples < 3 {
		t.Errorf("samples = %d", r.Samples)
	}
	if r.ClientCPUs != 0 || r.ClientBound {
		t.Errorf("no client was given: %+v", r)
	}
}

// waitTreeCPU waits until the sampler has seen at least want seconds.
func waitTreeCPU(t *testing.T, s *Sampler, want float64) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s.mu.Lock()
		got := ticksToSeconds(s.target.delta())
		s.mu.Unlock()
		if got >= want-0.02 {
			return
		}
	}
	t.Fatalf("the sampler never saw %.2f s of CPU", want)
}

func TestSamplerFindsLateChildren(t *testing.T) {
	t.Parallel()
	// The child starts 300 ms into the cell: found by a later scan, and all its CPU counts.
	cmd := startTree(t, helperSpec{ChildDelayMS: 300, HoldMS: 6000, Child: &helperSpec{BurnMS: 300, HoldMS: 3000}})
	s, err := startSampler(cmd.Process.Pid, 0, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitTreeCPU(t, s, 0.3)
	r := s.Stop()
	t.Logf("%+v", r)
	if r.TargetCPUSeconds < 0.28 || r.TargetProcs != 2 {
		t.Errorf("tree CPU = %.3f s over %d processes, want ≥ 0.3 over 2", r.TargetCPUSeconds, r.TargetProcs)
	}
}

func TestSamplerIdleTree(t *testing.T) {
	t.Parallel()
	cmd := startTree(t, helperSpec{HoldMS: 5000, Child: &helperSpec{HoldMS: 5000}})
	waitProcs(t, cmd.Process.Pid, 2)
	s, err := startSampler(cmd.Process.Pid, 0, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitTreeSamples(t, s, 5)
	r := s.Stop()
	t.Logf("%+v", r)
	if r.TargetCPUSeconds > 0.05 {
		t.Errorf("idle tree CPU = %.3f s, want ≈ 0", r.TargetCPUSeconds)
	}
	if r.RSSPeakMB <= 0 {
		t.Errorf("RSS peak = %.2f MiB, want > 0", r.RSSPeakMB)
	}
	// TargetProcs counts every process seen in the tree during the cell, so on a loaded machine
	// a short-lived one may be counted too (seen once in CI: 3); the two started must be there.
	if r.Samples < 5 || r.TargetProcs < 2 {
		t.Errorf("samples %d, processes %d, want ≥ 5 samples and the 2 processes started", r.Samples, r.TargetProcs)
	}
	if again := s.Stop(); again != r {
		t.Errorf("second Stop = %+v, want the same figures", again)
	}
}

// waitTreeSamples waits until the sampler has taken n samples: on a busy machine its ticker falls
// behind, so a fixed time does not make a count.
func waitTreeSamples(t *testing.T, s *Sampler, n int) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if samplesTaken(s) >= n {
			return
		}
	}
	t.Fatalf("the sampler never took %d samples", n)
}

func samplesTaken(s *Sampler) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

func TestSamplerExitedProcessKeepsItsCPU(t *testing.T) {
	t.Parallel()
	// The child burns 300 ms during the cell and exits long before the cell ends: its CPU stays.
	cmd := startTree(t, helperSpec{HoldMS: 6000, Child: &helperSpec{DelayMS: 300, BurnMS: 300, HoldMS: 400}})
	waitProcs(t, cmd.Process.Pid, 2)
	s, err := startSampler(cmd.Process.Pid, 0, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitTreeCPU(t, s, 0.3)
	waitProcsBelow(t, cmd.Process.Pid, 2)
	waitTreeSamples(t, s, samplesTaken(s)+1) // one sample after the child's exit
	r := s.Stop()
	t.Logf("%+v", r)
	if r.TargetCPUSeconds < 0.28 {
		t.Errorf("tree CPU after the child exited = %.3f s, want ≥ 0.3", r.TargetCPUSeconds)
	}
}

func TestSamplerExitDoesNotGoNegative(t *testing.T) {
	t.Parallel()
	// The child burns 300 ms BEFORE the cell, then exits during it: the cell used ≈ 0, and a
	// naive "tree now − tree at start" would say −0.3 s.
	cmd := startTree(t, helperSpec{HoldMS: 6000, Child: &helperSpec{BurnMS: 300, HoldMS: 700}})
	waitProcs(t, cmd.Process.Pid, 2)
	waitCPU(t, cmd.Process.Pid, 0.28)
	s, err := startSampler(cmd.Process.Pid, 0, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitProcsBelow(t, cmd.Process.Pid, 2)
	waitTreeSamples(t, s, samplesTaken(s)+1) // one sample after the child's exit
	r := s.Stop()
	t.Logf("%+v", r)
	if r.TargetCPUSeconds < 0 || r.TargetCPUSeconds > 0.1 {
		t.Errorf("tree CPU = %.3f s, want ≈ 0 (the burn was before the cell)", r.TargetCPUSeconds)
	}
}

// waitCPU waits until the tree under root used want seconds in all (not as a delta).
func waitCPU(t *testing.T, root int, want float64) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var stats map[int]procStat
		var kids map[int][]int
		if !hasChildrenFiles() {
			stats, kids = scanProc()
		}
		var sum uint64
		for _, p := range walk(root, stats, kids) {
			sum += p.ticks
		}
		if ticksToSeconds(sum) >= want {
			return
		}
	}
	t.Fatalf("the tree under %d never used %.2f s", root, want)
}

// waitProcsBelow waits until the tree under root has fewer than n live processes.
func waitProcsBelow(t *testing.T, root, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var stats map[int]procStat
		var kids map[int][]int
		if !hasChildrenFiles() {
			stats, kids = scanProc()
		}
		if len(walk(root, stats, kids)) < n {
			return
		}
	}
	t.Fatalf("the tree under %d kept %d processes", root, n)
}

func TestSamplerClient(t *testing.T) {
	t.Parallel()
	target := startTree(t, helperSpec{HoldMS: 5000})
	s, err := startSampler(target.Process.Pid, 0, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	client := helperCmd(helperSpec{BurnMS: 300, HoldMS: 100})
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	s.SetClient(client.Process.Pid, nil)
	if err := client.Wait(); err != nil {
		t.Fatal(err)
	}
	s.ClientDone(client.ProcessState)
	r := s.Stop()
	t.Logf("%+v", r)
	if r.ClientCPUSeconds < 0.3 || r.ClientCPUSeconds > 1 {
		t.Errorf("client CPU = %.3f s, want ≥ 0.3", r.ClientCPUSeconds)
	}
	if r.ClientCPUs != CPUsAvailable() {
		t.Errorf("client CPUs = %d, want %d", r.ClientCPUs, CPUsAvailable())
	}
	if r.ClientCPUUtil <= 0 || r.ClientCPUUtil > 1.05 {
		t.Errorf("client utilisation = %.3f", r.ClientCPUUtil)
	}
	if r.TargetCPUSeconds > 0.05 {
		t.Errorf("the client's CPU leaked into the target's: %.3f s", r.TargetCPUSeconds)
	}
}
