package runner

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/proxybench/proxybench/stack"
)

// Resources is what a cell cost, read from /proc while it ran (see Sampler).
//
// Target figures cover the target's whole process tree (nginx's master and workers, every
// thread of a Go or Rust proxy), as deltas over the cell: a process that was there before the
// cell counts only what it used during it, one started during the cell counts all it used, one
// that exited during it keeps what it had used at its last sample. Client figures cover k6's
// process (and any child), over its own lifetime.
type Resources struct {
	TargetCPUSeconds float64 `json:"target_cpu_s"` // utime+stime of the tree, delta over the cell
	// TargetCPUPerReqMicros is TargetCPUSeconds per request, in µs, once PerRequest was given
	// the request count; 0 while unknown.
	TargetCPUPerReqMicros float64 `json:"target_cpu_us_per_req"`
	Requests              float64 `json:"requests"`     // what TargetCPUPerReqMicros divides by
	RSSPeakMB             float64 `json:"rss_peak_mb"`  // MiB: largest sum of VmRSS over the tree
	RSSMeanMB             float64 `json:"rss_mean_mb"`  // MiB: mean over the samples
	TargetProcs           int     `json:"target_procs"` // processes seen in the tree
	WallSeconds           float64 `json:"wall_s"`       // sampler start → stop

	ClientCPUSeconds float64 `json:"client_cpu_s"`
	// ClientLoadSeconds is how long the client's load phase lasted: the part of its life the
	// figures below are judged on (see loadPhase: from 10% to 90% of its CPU time).
	ClientLoadSeconds float64 `json:"client_load_s"`
	// ClientIdleCPUSeconds is the CPU time left idle on the client's CPUs during its load phase
	// (/proc/stat idle+iowait of each): CPU the client could still have used.
	ClientIdleCPUSeconds float64 `json:"client_idle_cpu_s"`
	// ClientCPUUtil is the share the client used of the CPU it could have had during its load
	// phase: its CPU / (its CPU + ClientIdleCPUSeconds), both over that phase. Unpinned, the client shares
	// its CPUs with the target and the upstream, and what they used was never the client's to
	// have: measured against wall × CPUs, a client that took every idle cycle would read
	// far below 1 and never be flagged. Pinned on CPUs of its own, the two measures agree.
	ClientCPUUtil float64 `json:"client_cpu_util"`
	// ClientCPUShare is the client's share of all the CPU used on its CPUs during its load phase
	// (its CPU / (ClientLoadSeconds × ClientCPUs − ClientIdleCPUSeconds)): who else used them.
	ClientCPUShare float64 `json:"client_cpu_share"`
	ClientCPUs     int     `json:"client_cpus"` // CPUs k6 could run on; 0: the client was not measured
	// ClientBound is ClientCPUUtil ≥ ClientBoundUtil and ClientCPUShare ≥ ClientBoundShare: no
	// CPU was left that the client did not take, and the client was the main user of its CPUs,
	// so a cheaper client would have left the target more: the client, not the target, set the
	// pace, and the cell's req/s is the client's ceiling rather than the target's. (A target
	// that used most of the CPUs itself sets its own pace, saturated or not.)
	ClientBound bool `json:"client_bound"`

	// MachineCPUSeconds is the CPU every process of the machine used while the sampler ran,
	// OtherCPUSeconds what of it was neither the target's, the client's nor the upstream's, and
	// OtherCPUShare that as a share of the machine's CPU time (wall × CPUs). OutsideLoad: above
	// OutsideLoadShare, the run shared the machine with someone else's work.
	MachineCPUSeconds float64 `json:"machine_cpu_s,omitempty"`
	OtherCPUSeconds   float64 `json:"other_cpu_s,omitempty"`
	OtherCPUShare     float64 `json:"other_cpu_share,omitempty"`
	OutsideLoad       bool    `json:"outside_load,omitempty"`

	Samples int `json:"samples"`
}

// ClientBoundUtil and ClientBoundShare are the ClientCPUUtil and ClientCPUShare from which a
// cell is flagged client-bound.
const (
	ClientBoundUtil  = 0.90
	ClientBoundShare = 0.50
)

// SampleInterval is how often a Sampler reads /proc.
const SampleInterval = 200 * time.Millisecond

// RescanInterval is how often a Sampler looks for new processes in the trees when the kernel
// has no children files (see Sampler.sample).
const RescanInterval = time.Second

// PerRequest sets the per-request CPU figure. requests should count every request the client
// sent while the sampler ran (warm-up and setup included: the target's CPU covers them too);
// AllRequests reads that count from a result file.
func (r *Resources) PerRequest(requests float64) {
	r.Requests = requests
	r.TargetCPUPerReqMicros = 0
	if requests > 0 {
		r.TargetCPUPerReqMicros = r.TargetCPUSeconds * 1e6 / requests
	}
}

// AllRequests is the number of requests (and WebSocket sessions) k6 sent during the run whose
// result file is path: k6's own `http_reqs` count over the whole run, warm-up and setup()
// included, unlike the result's `requests`, which counts the measured window only. The
// target's CPU covers the whole run, so this is the count to divide it by.
func AllRequests(path string) (float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var doc struct {
		K6 struct {
			Metrics map[string]struct {
				Values map[string]float64 `json:"values"`
			} `json:"metrics"`
		} `json:"k6"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	m, ok := doc.K6.Metrics["http_reqs"]
	if !ok {
		return 0, fmt.Errorf("%s: no k6 http_reqs metric", path)
	}
	n := m.Values["count"]
	// k6/websockets sessions are no http_reqs; each is a connection and an upgrade.
	if ws, ok := doc.K6.Metrics["ws_sessions"]; ok {
		n += ws.Values["count"]
	}
	return n, nil
}

// CPUsAvailable is the number of CPUs this process may run on (sched_getaffinity), which is
// what a k6 started from it without pinning may use.
func CPUsAvailable() int { return len(cpusOf(0)) }

// cpusOf lists the CPUs process pid may run on (0: this process), ascending; every CPU
// (runtime.NumCPU) when its affinity cannot be read.
func cpusOf(pid int) []int {
	cpus, _ := stack.AvailableCPUsOf(pid)
	if len(cpus) == 0 {
		for c := range runtime.NumCPU() {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

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
	s.trace = append(s.trace, clientPoint{at: at, cpu: s.client.delta(), idle: idle})
}

func (s *Sampler) loop(interval time.Duration) {
	defer close(s.done)
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tk.C:
			s.sample(false, false)
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
		from, to := loadPhase(s.trace)
		cpu := ticksToSeconds(to.cpu - from.cpu)
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

// clientPoint is the client's CPU (clock ticks since it started) and its CPUs' idle time
// (clock ticks since boot) at one time.
type clientPoint struct {
	at        time.Time
	cpu, idle uint64
}

// loadPhase is the part of the client's life that the utilisation is judged on: from the
// sample by which it had used 10% of its CPU time to the one by which it had used 90%, the
// load itself, without k6's start-up (the script's compilation), the gap after the warm-up
// nor setup() and the summary, whose idle time would dilute a client that was flat out while
// the load ran. The whole life when that part is shorter than a second or has too few samples.
func loadPhase(tr []clientPoint) (from, to clientPoint) {
	from, to = tr[0], tr[len(tr)-1]
	total := to.cpu - tr[0].cpu
	i := slices.IndexFunc(tr, func(p clientPoint) bool { return (p.cpu-tr[0].cpu)*10 >= total })
	j := slices.IndexFunc(tr, func(p clientPoint) bool { return (p.cpu-tr[0].cpu)*10 >= total*9 })
	if total == 0 || i < 0 || j-i < 5 || tr[j].at.Sub(tr[i].at) < time.Second {
		return from, to
	}
	return tr[i], tr[j]
}

// setClient fills the client figures judged over its load phase from what it used of its CPUs
// then: CPU seconds, the CPU seconds left idle on its CPUs, wall seconds, and its number of
// CPUs. (ClientCPUSeconds is the client's whole life's: the caller's.)
func (r *Resources) setClient(cpuSeconds, idleSeconds, wallSeconds float64, cpus int) {
	r.ClientIdleCPUSeconds = idleSeconds
	r.ClientLoadSeconds = wallSeconds
	r.ClientCPUs = cpus
	r.ClientCPUUtil, r.ClientCPUShare = 0, 0
	if cpus <= 0 || wallSeconds <= 0 {
		r.ClientBound = false
		return
	}
	if had := cpuSeconds + idleSeconds; had > 0 {
		r.ClientCPUUtil = cpuSeconds / had
	}
	// Clock and tick granularity can put the busy time a hair under the client's own.
	if busy := max(wallSeconds*float64(cpus)-idleSeconds, cpuSeconds); busy > 0 {
		r.ClientCPUShare = cpuSeconds / busy
	}
	r.ClientBound = r.ClientCPUUtil >= ClientBoundUtil && r.ClientCPUShare >= ClientBoundShare
}

// statLines are the names of a set of CPUs' lines in /proc/stat (cpu0, cpu3, …).
type statLines map[string]bool

func statLinesOf(cpus []int) statLines {
	lines := statLines{}
	for _, c := range cpus {
		lines["cpu"+strconv.Itoa(c)] = true
	}
	return lines
}

// errNoIdle stands for a /proc/stat that could not be read before.
var errNoIdle = errors.New("/proc/stat unreadable")

// idleTicks is the idle time of a set of CPUs so far (/proc/stat: idle + iowait of each of
// their lines, in clock ticks): an I/O wait is an idle CPU.
func idleTicks(want statLines) (uint64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseIdle(data, want)
}

func parseIdle(data []byte, want statLines) (uint64, error) {
	var sum uint64
	found := 0
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		// cpuN user nice system idle iowait …
		if len(f) < 6 || !want[string(f[0])] {
			continue
		}
		idle, err1 := strconv.ParseUint(string(f[4]), 10, 64)
		wait, err2 := strconv.ParseUint(string(f[5]), 10, 64)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("/proc/stat: %s: unreadable idle or iowait", f[0])
		}
		sum += idle + wait
		found++
	}
	if found != len(want) {
		return 0, fmt.Errorf("/proc/stat: %d of the %d CPUs' lines found", found, len(want))
	}
	return sum, nil
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

var (
	childrenOnce sync.Once
	childrenOK   bool
)

// hasChildrenFiles tells whether the kernel exposes /proc/<pid>/task/<tid>/children
// (CONFIG_PROC_CHILDREN); without it the sampler scans /proc.
func hasChildrenFiles() bool {
	childrenOnce.Do(func() {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d/children", unix.Gettid()))
		childrenOK = err == nil
	})
	return childrenOK
}

func readChildren(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var kids []int
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, w := range bytes.Fields(data) {
			if n, err := strconv.Atoi(string(w)); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// scanProc reads every process's stat and indexes children by parent.
func scanProc() (map[int]procStat, map[int][]int) {
	stats := map[int]procStat{}
	children := map[int][]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return stats, children
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		stats[pid] = st
		children[st.ppid] = append(children[st.ppid], pid)
	}
	return stats, children
}

// readStat parses /proc/<pid>/stat (proc(5)): the fields after the command name, which is in
// parentheses and may itself hold spaces and parentheses. rss (field 24) is the same count of
// resident pages as status's VmRSS.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, data)
}

func parseStat(pid int, data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(data[i+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	num := func(n int) uint64 {
		v, _ := strconv.ParseUint(string(f[n-3]), 10, 64)
		return v
	}
	return procStat{
		pid:      pid,
		ppid:     int(num(4)),
		ticks:    num(14) + num(15),
		start:    num(22),
		rssPages: num(24),
	}, nil
}

// bootTicks is the time since boot in clock ticks, the unit of a process's starttime.
func bootTicks() uint64 {
	data, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := bytes.Fields(data)
	if len(f) == 0 {
		return 0
	}
	up, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return 0
	}
	return uint64(up * float64(clockTicks()))
}

func ticksToSeconds(t uint64) float64 { return float64(t) / float64(clockTicks()) }

var (
	clkTckOnce sync.Once
	clkTck     uint64
)

// clockTicks is CLK_TCK, what sysconf(_SC_CLK_TCK) returns: the kernel passes it to every
// process in its aux vector as AT_CLKTCK. 100 when that cannot be read (it is 100 on Linux).
func clockTicks() uint64 {
	clkTckOnce.Do(func() {
		clkTck = 100
		if v, err := auxvClockTicks(); err == nil && v > 0 {
			clkTck = v
		}
	})
	return clkTck
}

func auxvClockTicks() (uint64, error) {
	const atClkTck = 17 // AT_CLKTCK, <linux/auxvec.h>
	data, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return 0, err
	}
	word := strconv.IntSize / 8 // auxv entries are two unsigned longs
	get := func(b []byte) uint64 {
		if word == 4 {
			return uint64(binary.NativeEndian.Uint32(b))
		}
		return binary.NativeEndian.Uint64(b)
	}
	for i := 0; i+2*word <= len(data); i += 2 * word {
		k, v := get(data[i:]), get(data[i+word:])
		if k == atClkTck {
			return v, nil
		}
		if k == 0 {
			break
		}
	}
	return 0, errors.New("no AT_CLKTCK in /proc/self/auxv")
}
