package main

import (
	"os"
	"path/filepath"
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
	k6exe   string
	stop    chan struct{}
	done    chan struct{}
}

func startSoakSampler(procs []*soakProc, k6exe string, interval time.Duration) *soakSampler {
	if p, err := filepath.EvalSymlinks(k6exe); err == nil {
		k6exe = p
	}
	s := &soakSampler{t0: time.Now(), procs: procs, k6exe: k6exe, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		// k6 is found as soon as it runs, so that its pid is known before the first sample
		find := time.NewTicker(100 * time.Millisecond)
		defer find.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-find.C:
				if s.findK6() {
					find.Stop()
				}
			case <-tk.C:
				s.sample()
			}
		}
	}()
	return s
}

// findK6 looks for the k6 the runner started (a child of ours running bin/k6); true once found.
func (s *soakSampler) findK6() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		if p.Role == roleK6 {
			if p.PID == 0 {
				p.PID = runner.ChildRunning(os.Getpid(), s.k6exe)
			}
			return p.PID != 0
		}
	}
	return true
}

func (s *soakSampler) sample() {
	s.findK6()
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
