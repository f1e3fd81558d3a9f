package sample

import (
	"time"
)

// targetPoint is the target tree's RSS (bytes) and CPU (clock ticks over the cell) at one sample.
type targetPoint struct {
	at  time.Time
	rss float64
	cpu uint64
}

// Window is what the target used over a part of a run, read from the samples within it.
type Window struct {
	// RSSBeforeMB is the target's RSS at the sampler's first sample (before the client
	// started), RSSMB its mean over the samples in the window, MiB.
	RSSBeforeMB float64
	RSSMB       float64
	// CPUSeconds is the target's CPU between the first and last samples in the window, over
	// Seconds of wall time between them.
	CPUSeconds, Seconds float64
	Samples             int
}

// Window is the target's figures over [from, to], once the sampler stopped; ok is false with
// fewer than two samples in it (a window shorter than two SampleIntervals tells nothing).
func (s *Sampler) Window(from, to time.Time) (w Window, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.targetTrace) == 0 {
		return w, false
	}
	w.RSSBeforeMB = s.targetTrace[0].rss / (1 << 20)
	var in []targetPoint
	for _, p := range s.targetTrace {
		if !p.at.Before(from) && !p.at.After(to) {
			in = append(in, p)
		}
	}
	if len(in) < 2 {
		return w, false
	}
	sum := 0.0
	for _, p := range in {
		sum += p.rss
	}
	first, last := in[0], in[len(in)-1]
	w.RSSMB = sum / float64(len(in)) / (1 << 20)
	w.CPUSeconds = ticksToSeconds(last.cpu - first.cpu)
	w.Seconds = last.at.Sub(first.at).Seconds()
	w.Samples = len(in)
	return w, true
}
