package sample

import (
	"math"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/proxybench/proxybench/verdict"
)

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
	if busy.ClientCPUUtil < verdict.ClientBoundUtil || busy.ClientBound != (busy.ClientCPUShare >= verdict.ClientBoundShare) {
		t.Errorf("a client burning its only CPU: util %.3f share %.3f bound %v; want util ≥ %.2f, bound as its share says",
			busy.ClientCPUUtil, busy.ClientCPUShare, busy.ClientBound, verdict.ClientBoundUtil)
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
		wantPhase        bool
	}{
		// 1 s of start-up (no CPU), 10 s of load at 20 ticks a point, 1 s of summary
		{"start-up and summary left out", trace(61, func(i int) uint64 { return uint64(min(max(i-5, 0), 50)) * 20 }), 10, 50, true},
		{"too short: the whole life", trace(6, func(i int) uint64 { return uint64(i) * 20 }), 0, 5, false},
		{"no CPU at all: the whole life", trace(20, func(int) uint64 { return 0 }), 0, 19, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			from, to, phase := loadPhase(tc.tr)
			if from != tc.tr[tc.wantFrom] || to != tc.tr[tc.wantTo] || phase != tc.wantPhase {
				t.Errorf("loadPhase = points at %v → %v, want %v → %v", from.at.Sub(t0), to.at.Sub(t0),
					tc.tr[tc.wantFrom].at.Sub(t0), tc.tr[tc.wantTo].at.Sub(t0))
			}
		})
	}
}

func TestClientOverTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Resources
		want float64
	}{
		// 0.3 s of k6's start-up and summary on 1.5 s of load that cost the target 1 s
		{"the load phase, start-up left out", Resources{ClientCPUSeconds: 1.8, TargetCPUSeconds: 1, ClientLoadCPUSeconds: 1.2, TargetLoadCPUSeconds: 0.8}, 1.5},
		{"no load phase: the whole figures", Resources{ClientCPUSeconds: 1.8, TargetCPUSeconds: 1}, 1.8},
		{"a target that used nothing in the phase: the whole figures", Resources{ClientCPUSeconds: 1.8, TargetCPUSeconds: 1, ClientLoadCPUSeconds: 1.2}, 1.8},
		{"a target that used nothing", Resources{ClientCPUSeconds: 1.8}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.ClientOverTarget(); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("ClientOverTarget() = %v, want %v", got, tc.want)
			}
		})
	}
}
