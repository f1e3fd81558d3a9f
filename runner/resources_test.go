package runner

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// waitProcs waits until the tree under root has n processes.
func waitProcs(t *testing.T, root, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var stats map[int]procStat
		var kids map[int][]int
		if !hasChildrenFiles() {
			stats, kids = scanProc()
		}
		if len(walk(root, stats, kids)) >= n {
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
	time.Sleep(600 * time.Millisecond)
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
	time.Sleep(200 * time.Millisecond)
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
	time.Sleep(200 * time.Millisecond)
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

func TestClientBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		cpu, idle, wall float64
		cpus            int
		util, share     float64
		bound           bool
	}{
		{"alone and busy", 1.8, 0.2, 1, 2, 0.9, 1, true},
		{"alone, idle left", 1.7, 0.3, 1, 2, 0.85, 1, false},
		{"pinned to one CPU, using it", 9.5, 0.5, 10, 1, 0.95, 1, true},
		{"shared, saturated, main user", 12, 0.5, 10, 2, 12 / 12.5, 12 / 19.5, true},
		{"shared, saturated, the target the main user", 6, 0.2, 10, 2, 6 / 6.2, 6 / 19.8, false},
		{"shared, idle left", 5, 6, 10, 2, 5.0 / 11, 5.0 / 14, false},
		{"asleep on busy CPUs", 0.01, 0, 1, 2, 1, 0.005, false},
		{"no wall time: no claim", 1, 0, 0, 2, 0, 0, false},
		{"CPUs unknown: no claim", 1, 1, 1, 0, 0, 0, false},
		{"tick jitter: busy under the client's own", 2.01, 0, 1, 2, 1, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Resources
			r.setClient(tc.cpu, tc.idle, tc.wall, tc.cpus)
			if math.Abs(r.ClientCPUUtil-tc.util) > 1e-9 || math.Abs(r.ClientCPUShare-tc.share) > 1e-9 || r.ClientBound != tc.bound {
				t.Errorf("setClient(%v, %v, %v, %d) = util %v share %v bound %v, want %v %v %v",
					tc.cpu, tc.idle, tc.wall, tc.cpus, r.ClientCPUUtil, r.ClientCPUShare, r.ClientBound, tc.util, tc.share, tc.bound)
			}
		})
	}
}

func TestParseIdle(t *testing.T) {
	t.Parallel()
	stat := []byte("cpu  35170 0 8134 16502 868 0 66 120 0 0\n" +
		"cpu0 16708 0 3650 9972 81 0 7 59 0 0\n" +
		"cpu1 18462 0 4483 6529 787 0 59 61 0 0\n" +
		"intr 1 2 3\n")
	tests := []struct {
		cpus []int
		want uint64
		err  bool
	}{
		{[]int{0}, 9972 + 81, false},
		{[]int{1}, 6529 + 787, false},
		{[]int{0, 1}, 9972 + 81 + 6529 + 787, false},
		{[]int{2}, 0, true},    // not in the file: no figure rather than a wrong one
		{[]int{0, 3}, 0, true}, //
	}
	for _, tc := range tests {
		got, err := parseIdle(stat, statLinesOf(tc.cpus))
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseIdle(%v) = %d, %v; want %d, error %v", tc.cpus, got, err, tc.want, tc.err)
		}
	}
}

// TestClientBoundReal runs a client pinned to one CPU (taskset, as PIN does): one that keeps it
// busy has taken all the CPU it could (what else ran there decides whether it was the main
// user, so only the utilisation is asserted), one that sleeps is never client-bound, however
// busy the CPU.
func TestClientBoundReal(t *testing.T) {
	t.Parallel()
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset (util-linux)")
	}
	cpus := cpusOf(0)
	cpu := cpus[len(cpus)-1]
	run := func(spec helperSpec) Resources {
		target := startTree(t, helperSpec{HoldMS: 5000})
		s, err := startSampler(target.Process.Pid, 0, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		client := helperCmd(spec)
		client.Args = append([]string{taskset, "-c", strconv.Itoa(cpu), client.Path}, client.Args[1:]...)
		client.Path = taskset
		if err := client.Start(); err != nil {
			t.Fatal(err)
		}
		s.SetClient(client.Process.Pid, []int{cpu})
		if err := client.Wait(); err != nil {
			t.Fatal(err)
		}
		s.ClientDone(client.ProcessState)
		r := s.Stop()
		t.Logf("%+v", r)
		if r.ClientCPUs != 1 {
			t.Errorf("client CPUs = %d, want 1", r.ClientCPUs)
		}
		return r
	}
	busy := run(helperSpec{BurnMS: 1500})
	if busy.ClientCPUUtil < ClientBoundUtil || busy.ClientBound != (busy.ClientCPUShare >= ClientBoundShare) {
		t.Errorf("a client burning its only CPU: util %.3f share %.3f bound %v; want util ≥ %.2f, bound as its share says",
			busy.ClientCPUUtil, busy.ClientCPUShare, busy.ClientBound, ClientBoundUtil)
	}
	asleep := run(helperSpec{HoldMS: 800})
	if asleep.ClientBound {
		t.Errorf("a sleeping client was flagged client-bound: util %.3f share %.3f", asleep.ClientCPUUtil, asleep.ClientCPUShare)
	}
}

func TestPerRequest(t *testing.T) {
	t.Parallel()
	r := Resources{TargetCPUSeconds: 2.5}
	r.PerRequest(50000)
	if r.TargetCPUPerReqMicros != 50 || r.Requests != 50000 {
		t.Errorf("PerRequest: %+v, want 50 µs", r)
	}
	r.PerRequest(0)
	if r.TargetCPUPerReqMicros != 0 {
		t.Errorf("PerRequest(0) = %v, want 0", r.TargetCPUPerReqMicros)
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	// A command name with a space and a parenthesis, as nginx's "nginx: worker process" has.
	line := "4242 (nginx: wo) rker) S 4241 4241 4241 0 -1 4194624 100 0 0 0 " +
		"150 25 0 0 20 0 1 0 987654 123456789 3072 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
	st, err := parseStat(4242, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != 4241 || st.ticks != 175 || st.start != 987654 || st.rssPages != 3072 {
		t.Errorf("parseStat = %+v", st)
	}
	if _, err := parseStat(1, []byte("1 (x")); err == nil {
		t.Error("a truncated stat parsed")
	}
}

func TestRSSIsVmRSS(t *testing.T) {
	t.Parallel()
	st, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			var kb float64
			_, _ = fmt.Sscan(f[1], &kb)
			got := float64(st.rssPages) * float64(os.Getpagesize()) / 1024
			if math.Abs(got-kb) > 0.2*kb {
				t.Errorf("stat rss = %.0f kB, status VmRSS = %.0f kB", got, kb)
			}
			return
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
}

func TestClockTicksAndCPUs(t *testing.T) {
	t.Parallel()
	if v := clockTicks(); v != 100 {
		t.Logf("CLK_TCK = %d (not 100: unusual, but read from the aux vector)", v)
	}
	if _, err := auxvClockTicks(); err != nil {
		t.Errorf("AT_CLKTCK: %v", err)
	}
	if n := CPUsAvailable(); n < 1 {
		t.Errorf("CPUsAvailable = %d", n)
	}
}

func TestAllRequests(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(p, []byte(`{"schema":1,"requests":200,"k6":{"metrics":{"http_reqs":{"type":"counter","values":{"count":201,"rate":9}}}}}`), 0o644)
	if n, err := AllRequests(p); err != nil || n != 201 {
		t.Errorf("AllRequests = %v, %v; want 201 (setup's probe included)", n, err)
	}
	os.WriteFile(p, []byte(`{"schema":1,"k6":{"metrics":{}}}`), 0o644)
	if _, err := AllRequests(p); err == nil {
		t.Error("a result without http_reqs gave no error")
	}
}

func TestLoadPhase(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	// trace: one point every 200 ms; cpu(i) is the client's ticks by point i
	trace := func(n int, cpu func(i int) uint64) []clientPoint {
		var tr []clientPoint
		for i := range n {
			tr = append(tr, clientPoint{at: t0.Add(time.Duration(i) * 200 * time.Millisecond), cpu: cpu(i), idle: uint64(i)})
		}
		return tr
	}
	tests := []struct {
		name             string
		tr               []clientPoint
		wantFrom, wantTo int // indexes into tr
	}{
		// 1 s of start-up (no CPU), 10 s of load at 20 ticks a point, 1 s of summary
		{"start-up and summary left out", trace(61, func(i int) uint64 { return uint64(min(max(i-5, 0), 50)) * 20 }), 10, 50},
		{"too short: the whole life", trace(6, func(i int) uint64 { return uint64(i) * 20 }), 0, 5},
		{"no CPU at all: the whole life", trace(20, func(int) uint64 { return 0 }), 0, 19},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			from, to := loadPhase(tc.tr)
			if from != tc.tr[tc.wantFrom] || to != tc.tr[tc.wantTo] {
				t.Errorf("loadPhase = points at %v → %v, want %v → %v", from.at.Sub(t0), to.at.Sub(t0),
					tc.tr[tc.wantFrom].at.Sub(t0), tc.tr[tc.wantTo].at.Sub(t0))
			}
		})
	}
}
