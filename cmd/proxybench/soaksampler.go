package main

import (
	"sync"
	"time"

	"github.com/proxybench/proxybench/runner"
)

// soakUsage is one process tree's reading: RSS and open file descriptors.
type soakUsage struct {
	RSSBytes uint64 `json:"rss_bytes"`
	FDs      int    `json:"fds"`
}

// soakSample is one reading of every process, at T seconds after the k6 run began.
type soakSample struct {
	T     float64               `json:"t_s"`
	Procs map[string]*soakUsage `json:"procs"` // by role; a role missing: not running then
}

// soakProc is a process followed by the soak.
type soakProc struct {
	Role string `json:"role"` // k6, target, upstream
	Name string `json:"name"` // k6, the target's name, direct
	PID  int    `json:"pid"`  // 0: not found (k6 before it started)
}

// soakSampler reads every process each interval until stopped.
type soakSampler struct {
	mu      sync.Mutex
	t0      time.Time
	procs   []*soakProc
	samples []soakSample
	stop    chan struct{}
	done    chan struct{}
}

func startSoakSampler(procs []*soakProc, interval time.Duration) *soakSampler {
	s := &soakSampler{t0: time.Now(), procs: procs, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tk.C:
				s.sample()
			}
		}
	}()
	return s
}

// setK6 is the runner's OnStart: k6's pid, as soon as it runs.
func (s *soakSampler) setK6(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		if p.Role == roleK6 {
			p.PID = pid
		}
	}
}

func (s *soakSampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	smp := soakSample{T: time.Since(s.t0).Seconds(), Procs: map[string]*soakUsage{}}
	for _, p := range s.procs {
		if p.PID == 0 {
			continue
		}
		if rss, fds, err := runner.TreeUsage(p.PID); err == nil {
			smp.Procs[p.Role] = &soakUsage{RSSBytes: rss, FDs: fds}
		}
	}
	s.samples = append(s.samples, smp)
}

// Stop ends the sampling and returns every sample.
func (s *soakSampler) Stop() []soakSample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}
