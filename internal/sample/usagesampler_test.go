package sample

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// The sampler reads every tree it follows each interval, a tree followed late from then on,
// and leaves out a tree whose root has ended.
func TestUsageSampler(t *testing.T) {
	const interval = 20 * time.Millisecond
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleep.Process.Kill(); _ = sleep.Wait() }()
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}

	s := StartUsageSampler(interval, map[string]int{"self": os.Getpid(), "ended": ended.Process.Pid, "none": 0})
	waitSamples(t, s, 3)
	s.Follow("late", sleep.Process.Pid)
	mark := s.Elapsed()
	waitSamples(t, s, 6)
	samples := s.Stop()
	if again := s.Stop(); len(again) != len(samples) {
		t.Errorf("a second Stop: %d samples, want the first's %d", len(again), len(samples))
	}

	tests := []struct {
		name   string
		tree   string
		from   time.Duration // the tree is read in every sample from this time on
		absent bool          // the tree is in no sample
	}{
		{"this process", "self", 0, false},
		{"followed late", "late", mark + interval, false},
		{"an ended process", "ended", 0, true},
		{"pid 0", "none", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := 0
			for _, smp := range samples {
				u, ok := smp.Trees[tc.tree]
				if tc.absent && ok {
					t.Fatalf("at %v: read %+v, want nothing", smp.At, u)
				}
				if !tc.absent && smp.At >= tc.from && (!ok || u.FDs == 0) {
					t.Errorf("at %v: %+v, %v; want a reading with open files", smp.At, u, ok)
				}
				if ok {
					read++
				}
			}
			if !tc.absent && read == 0 {
				t.Errorf("read in no sample of %d", len(samples))
			}
		})
	}
	for i := 1; i < len(samples); i++ {
		if samples[i].At <= samples[i-1].At {
			t.Errorf("sample %d at %v, not after the one before (%v)", i, samples[i].At, samples[i-1].At)
		}
	}
}

// waitSamples waits until s holds n samples, at most 5 s.
func waitSamples(t *testing.T, s *UsageSampler, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		got := len(s.samples)
		s.mu.Unlock()
		if got >= n {
			return
		}
	}
	t.Fatalf("fewer than %d samples after 5 s", n)
}
