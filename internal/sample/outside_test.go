package sample

import (
	"testing"
	"time"
)

func TestParseMachineTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stat  string
		busy, total uint64
		err         bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"all fields", "cpu  100 5 50 800 20 3 2 4 7 1\ncpu0 50 2 25 400 10 1 1 0 0 0\n", 159, 984, false},
		{"an older kernel's seven fields", "cpu  10 0 10 70 5 1 1\n", 20, 97, false},
		{"no aggregate line", "cpu0 1 2 3 4 5 6 7\n", 0, 0, true},
		{"garbage", "cpu  1 x 3 4 5 6 7\n", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busy, total, err := parseMachineTicks([]byte(tc.stat))
			if (err != nil) != tc.err || busy != tc.busy || total != tc.total {
				t.Errorf("parseMachineTicks = %d, %d, %v; want %d, %d, error %v", busy, total, err, tc.busy, tc.total, tc.err)
			}
		})
	}
}

// TestOutsideLoadFlagged burns CPU in a process that is neither target, client nor upstream
// while a sampler watches an idle target: the run is flagged.
func TestOutsideLoadFlagged(t *testing.T) {
	cmd := startTree(t, helperSpec{HoldMS: 5000})
	s, err := StartSampler(cmd.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.CountOutside(0)
	burn(600 * time.Millisecond) // this test's own process: neither target, client nor upstream
	r := s.Stop()
	if !r.OutsideLoad || r.OtherCPUSeconds < 0.3 {
		t.Errorf("a neighbour burning CPU: other %.2f s (%.0f%% of the machine), flagged %v; want ≥ 0.3 s, flagged",
			r.OtherCPUSeconds, r.OtherCPUShare*100, r.OutsideLoad)
	}
}
