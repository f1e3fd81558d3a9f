package sample

import (
	"sync"
	"time"
)

// TreeReading is one process tree's TreeUsage at one sample.
type TreeReading struct {
	RSSBytes uint64
	FDs      int
}

// UsageSample is one reading of every tree followed, At after the sampler started. A tree
// missing was not followed yet, not running, or not readable then.
type UsageSample struct {
	At    time.Duration
	Trees map[string]TreeReading
}

// UsageSampler reads the memory and open files of named process trees (TreeUsage) every
// interval until stopped: a series over minutes, where the Sampler adds up one cell's CPU and
// keeps only its RSS mean and peak.
type UsageSampler struct {
	start time.Time
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	pids    map[string]int
	samples []UsageSample
}

// StartUsageSampler follows the trees rooted at pids (by a name the samples are keyed by; a
// pid of 0 is not followed) and reads them every interval, the first an interval from now.
func StartUsageSampler(interval time.Duration, pids map[string]int) *UsageSampler {
	s := &UsageSampler{
		start: time.Now(),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		pids:  map[string]int{},
	}
	for name, pid := range pids {
		s.Follow(name, pid)
	}
	go s.loop(interval)
	return s
}

// Follow adds, or replaces, the tree named name from the next sample on: a process started
// after the sampler (k6, through Runner.OnStart). A pid of 0 stops following name.
func (s *UsageSampler) Follow(name string, pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pid == 0 {
		delete(s.pids, name)
		return
	}
	s.pids[name] = pid
}

// Elapsed is the time since the sampler started, the clock of the samples' At.
func (s *UsageSampler) Elapsed() time.Duration { return time.Since(s.start) }

func (s *UsageSampler) loop(interval time.Duration) {
	every(interval, s.stop, s.done, s.sample)
}

func (s *UsageSampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	smp := UsageSample{At: s.Elapsed(), Trees: map[string]TreeReading{}}
	for name, pid := range s.pids {
		if rss, fds, err := TreeUsage(pid); err == nil {
			smp.Trees[name] = TreeReading{RSSBytes: rss, FDs: fds}
		}
	}
	s.samples = append(s.samples, smp)
}

// Stop ends the sampling and returns every sample, oldest first. Calling it again returns the
// same samples.
func (s *UsageSampler) Stop() []UsageSample {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}
