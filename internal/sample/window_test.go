package sample

import (
	"testing"
	"time"
)

// A window's figures are the samples within it: the CPU burnt in it, the RSS held; a window
// with fewer than two samples tells nothing.
func TestSamplerWindow(t *testing.T) {
	t.Parallel()
	cmd := startTree(t, helperSpec{HoldMS: 6000, Child: &helperSpec{DelayMS: 300, BurnMS: 300, HoldMS: 3000}})
	waitProcs(t, cmd.Process.Pid, 2)
	from := time.Now()
	s, err := startSampler(cmd.Process.Pid, 0, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitTreeCPU(t, s, 0.3)
	waitTreeSamples(t, s, samplesTaken(s)+2)
	r := s.Stop()
	to := time.Now()
	w, ok := s.Window(from, to)
	t.Logf("%+v", w)
	if !ok || w.Samples != r.Samples {
		t.Fatalf("window over the whole run: ok %v, %d samples, want every one of %d", ok, w.Samples, r.Samples)
	}
	if w.CPUSeconds < 0.28 || w.CPUSeconds > r.TargetCPUSeconds+0.01 {
		t.Errorf("window CPU = %.3f s, want the 0.3 s burnt, at most the run's %.3f", w.CPUSeconds, r.TargetCPUSeconds)
	}
	if w.RSSBeforeMB <= 0 || w.RSSMB <= 0 || w.RSSMB > r.RSSPeakMB {
		t.Errorf("RSS before %.2f MiB, in the window %.2f MiB: want > 0 and at most the peak %.2f", w.RSSBeforeMB, w.RSSMB, r.RSSPeakMB)
	}
	if w.Seconds <= 0 || w.Seconds > to.Sub(from).Seconds() {
		t.Errorf("window of %.3f s, want within the run's %.3f s", w.Seconds, to.Sub(from).Seconds())
	}
	if _, ok := s.Window(to.Add(time.Second), to.Add(2*time.Second)); ok {
		t.Error("a window after the run: want no figures")
	}
}
