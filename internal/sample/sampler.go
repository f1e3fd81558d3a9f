package sample

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// Sampler follows a target's process tree, and optionally the client's, for one cell: every
// SampleInterval it walks the whole tree under the root pid (children found through
// /proc/<pid>/task/<tid>/children where the kernel has it, else by scanning every
// /proc/<pid>/stat for its parent), adding up utime+stime and VmRSS.
//
// CPU time is read in clock ticks, converted with the kernel's CLK_TCK as the process's aux
// vector gives it (AT_CLKTCK; 100 on every Linux we know, and 100 is assumed when the aux
// vector cannot be read). The accounting is per process (pid + start time, so a recycled pid is
// a new process): what a process used after its last sample is lost if it exits between two
// samples, at most one interval of its CPU. The sampler itself runs in the caller's process,
// which is neither the target's tree nor the client's.
type Sampler struct {
	target    *tree
	client    *tree
	startBoot uint64 // clock ticks since boot when the sampler started
	start     time.Time

	mu          sync.Mutex
	rssSum      float64 // bytes, summed over samples
	rssPeak     float64
	samples     int
	clientStart time.Time
	clientEnd   time.Time
	clientCPUs  []int
	clientLines statLines
	clientExact *float64 // rusage of the exited client, when ClientDone was called
	// trace is the client's CPU and its CPUs' idle time, from SetClient on, at every sample
	// and at its end; idleOK is false once /proc/stat could not be read.
	trace  []clientPoint
	idleOK bool
	// targetTrace is the target's RSS and CPU at every sample, for the figures of a part of
	// the run (Window: an idle run's hold).
	targetTrace []targetPoint

	// Used by the sampling goroutine only (and by Stop once it ended).
	kids     map[int][]int // ppid → children, from the last scan of /proc
	lastScan time.Time

	stop    chan struct{}
	done    chan struct{}
	stopped *Resources
	outside outsideMeter
}

// tree is the accounting of one process tree.
type tree struct {
	root  int
	procs map[procKey]*procCPU
}

type procKey struct {
	pid   int
	start uint64 // clock ticks since boot
}

type procCPU struct {
	base, last uint64 // clock ticks
}

// procStat is what the sampler reads from /proc/<pid>/stat.
type procStat struct {
	pid, ppid int
	ticks     uint64 // utime + stime
	start     uint64 // starttime, clock ticks since boot
	rssPages  uint64
}

// StartSampler starts sampling the process tree rooted at targetPID and takes the baseline
// at once. clientPID is k6's pid when already known, else 0 (see SetClient).
func StartSampler(targetPID, clientPID int) (*Sampler, error) {
	return startSampler(targetPID, clientPID, SampleInterval)
}

func startSampler(targetPID, clientPID int, interval time.Duration) (*Sampler, error) {
	if _, err := readStat(targetPID); err != nil {
		return nil, fmt.Errorf("resource sampler: target pid %d: %w", targetPID, err)
	}
	s := &Sampler{
		target:    &tree{root: targetPID, procs: map[procKey]*procCPU{}},
		startBoot: bootTicks(),
		start:     time.Now(),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if clientPID > 0 {
		s.SetClient(clientPID, nil)
	}
	s.sample(true, false)
	go s.loop(interval)
	return s, nil
}

// CountOutside measures, from now to Stop, the CPU the machine used beyond the target's, the
// client's and the upstream's (upstreamPID; 0 when the target is the upstream).
func (s *Sampler) CountOutside(upstreamPID int) {
	if upstreamPID == s.target.root {
		upstreamPID = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outside = startOutside(upstreamPID)
}

// SetClient starts following the client (k6) from now on; call it right after the client
// process started. Its CPU counts from its own start (a process started after the sampler
// counts whole), and its wall time and the idle time of its CPUs from this call. cpus are the
// CPUs it was given (pinned: its set; it may not have set its affinity yet, taskset does so
// after the start), nil: read its affinity now.
func (s *Sampler) SetClient(pid int, cpus []int) {
	if len(cpus) == 0 {
		cpus = cpusOf(pid)
	}
	lines := statLinesOf(cpus)
	idle, err := idleTicks(lines)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client = &tree{root: pid, procs: map[procKey]*procCPU{}}
	s.clientStart = time.Now()
	s.clientCPUs, s.clientLines = cpus, lines
	s.trace = []clientPoint{{at: s.clientStart, idle: idle}}
	s.idleOK = err == nil
}

// ClientDone records the client's exact CPU time from its exit status (the rusage wait4
// returned: every thread, to the end, where sampling would miss the last interval) and ends
// its wall time and idle time. Call it right after the client's Wait returned.
func (s *Sampler) ClientDone(ps *os.ProcessState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endClient()
	if ps != nil {
		cpu := (ps.UserTime() + ps.SystemTime()).Seconds()
		s.clientExact = &cpu
	}
}

// endClient ends the client's wall and idle time, once; s.mu is held.
func (s *Sampler) endClient() {
	if s.client == nil || !s.clientEnd.IsZero() {
		return
	}
	s.clientEnd = time.Now()
	idle, err := idleTicks(s.clientLines)
	s.traceClient(s.clientEnd, idle, err)
}

// traceClient adds the client's CPU so far and its CPUs' idle time at at (read by the caller,
// err when it could not be) to the trace; s.mu is held.
func (s *Sampler) traceClient(at time.Time, idle uint64, err error) {
	s.idleOK = s.idleOK && err == nil && idle >= s.trace[len(s.trace)-1].idle
	s.trace = append(s.trace, clientPoint{at: at, cpu: s.client.delta(), idle: idle, target: s.target.delta()})
}

func (s *Sampler) loop(interval time.Duration) {
	every(interval, s.stop, s.done, func() { s.sample(false, false) })
}

// every calls f each interval until stop is closed, then closes done: a sampler's loop.
func every(interval time.Duration, stop <-chan struct{}, done chan<- struct{}, f func()) {
	defer close(done)
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tk.C:
			f()
		}
	}
}

// Stop takes a last sample, stops the sampler and returns what the cell used. Calling it again
// returns the same figures.
func (s *Sampler) Stop() Resources {
	s.mu.Lock()
	if s.stopped != nil {
		defer s.mu.Unlock()
		return *s.stopped
	}
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	s.sample(false, true)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.endClient()
	end := time.Now()
	r := Resources{
		TargetCPUSeconds: ticksToSeconds(s.target.delta()),
		TargetProcs:      len(s.target.procs),
		WallSeconds:      end.Sub(s.start).Seconds(),
		Samples:          s.samples,
		RSSPeakMB:        s.rssPeak / (1 << 20),
	}
	if s.samples > 0 {
		r.RSSMeanMB = s.rssSum / float64(s.samples) / (1 << 20)
	}
	if s.client != nil {
		n := len(s.clientCPUs)
		from, to, phase := loadPhase(s.trace)
		cpu := ticksToSeconds(to.cpu - from.cpu)
		if phase {
			r.ClientLoadCPUSeconds, r.TargetLoadCPUSeconds = cpu, ticksToSeconds(to.target-from.target)
		}
		wall := to.at.Sub(from.at).Seconds()
		// Without /proc/stat, as if the client had its CPUs to itself: whatever it did not
		// use counts as idle.
		idle := wall*float64(n) - cpu
		if s.idleOK {
			idle = ticksToSeconds(to.idle - from.idle)
		}
		r.setClient(cpu, max(idle, 0), wall, n)
		r.ClientCPUSeconds = ticksToSeconds(s.client.delta())
		if s.clientExact != nil {
			r.ClientCPUSeconds = *s.clientExact
		}
	}
	s.outside.finish(&r)
	s.stopped = &r
	return r
}

// sample reads both trees once. The baseline sample sets every process's base to what it had
// used so far; a process first seen later counts from 0 if it started after the sampler did.
//
// Without children files, finding children means reading every process's stat (≈ 3 ms for
// 100 processes here): that full scan runs at the baseline, at the end and every
// RescanInterval; the samples between read only the processes of the trees as last scanned
// (a proxy's workers live as long as the proxy), each checked to still have the same parent.
func (s *Sampler) sample(baseline, final bool) {
	s.mu.Lock()
	client, lines, idleOK := s.client, s.clientLines, s.idleOK
	s.mu.Unlock()
	var stats map[int]procStat
	if !hasChildrenFiles() {
		if baseline || final || s.kids == nil || time.Since(s.lastScan) >= RescanInterval {
			stats, s.kids = scanProc()
			s.lastScan = time.Now()
		}
	}
	tStats := walk(s.target.root, stats, s.kids)
	var cStats []procStat
	idle, idleErr := uint64(0), errNoIdle
	if client != nil {
		cStats = walk(client.root, stats, s.kids)
		if idleOK {
			idle, idleErr = idleTicks(lines)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	rss := 0.0
	for _, p := range tStats {
		s.target.see(p, baseline, s.startBoot)
		rss += float64(p.rssPages) * float64(os.Getpagesize())
	}
	if client != nil {
		for _, p := range cStats {
			client.see(p, baseline, s.startBoot)
		}
		if s.clientEnd.IsZero() {
			s.traceClient(time.Now(), idle, idleErr)
		}
	}
	if len(tStats) == 0 && s.samples > 0 {
		return // the target is gone: nothing to add to the RSS figures
	}
	s.targetTrace = append(s.targetTrace, targetPoint{at: time.Now(), rss: rss, cpu: s.target.delta()})
	s.samples++
	s.rssSum += rss
	if rss > s.rssPeak {
		s.rssPeak = rss
	}
}

func (t *tree) see(p procStat, baseline bool, startBoot uint64) {
	k := procKey{p.pid, p.start}
	c, ok := t.procs[k]
	if !ok {
		c = &procCPU{}
		if baseline || p.start < startBoot {
			// There before the cell: only what it uses from now on counts.
			c.base = p.ticks
		}
		t.procs[k] = c
	}
	if p.ticks > c.last {
		c.last = p.ticks
	}
	if c.last < c.base {
		c.last = c.base
	}
}

// delta is the tree's CPU over the cell, in clock ticks: never negative, whoever exited.
func (t *tree) delta() uint64 {
	var d uint64
	for _, c := range t.procs {
		d += c.last - c.base
	}
	return d
}

// walk returns the stats of root and every descendant:
//   - stats and children from a scan of /proc: from them;
//   - children only (an earlier scan): reading each known process's stat afresh, and keeping
//     it only while its parent is still the one the scan saw (a recycled pid is not ours);
//   - neither: through /proc/<pid>/task/<tid>/children.
func walk(root int, stats map[int]procStat, children map[int][]int) []procStat {
	var out []procStat
	seen := map[int]bool{}
	type item struct{ pid, parent int }
	queue := []item{{root, -1}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if seen[it.pid] {
			continue
		}
		seen[it.pid] = true
		var st procStat
		var kids []int
		switch {
		case stats != nil:
			var ok bool
			if st, ok = stats[it.pid]; !ok {
				continue
			}
			kids = children[it.pid]
		case children != nil:
			var err error
			if st, err = readStat(it.pid); err != nil || (it.parent >= 0 && st.ppid != it.parent) {
				continue // exited, or its pid went to another process
			}
			kids = children[it.pid]
		default:
			var err error
			if st, err = readStat(it.pid); err != nil {
				continue // exited meanwhile
			}
			kids = readChildren(it.pid)
		}
		out = append(out, st)
		for _, k := range kids {
			queue = append(queue, item{k, it.pid})
		}
	}
	return out
}
