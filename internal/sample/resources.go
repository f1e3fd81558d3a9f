package sample

import (
	"slices"
	"time"

	"github.com/proxybench/proxybench/verdict"
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
	// ClientLoadCPUSeconds and TargetLoadCPUSeconds are what the client and the target used
	// over the client's load phase, sampled at the same times; 0 when the phase was too short
	// to tell from the whole life (loadPhase). Their ratio is the one that says whether the
	// client outspent the target while the requests ran: k6's start-up and summary (≈ 0.3 s
	// of CPU here) are no part of it.
	ClientLoadCPUSeconds float64 `json:"client_load_cpu_s,omitempty"`
	TargetLoadCPUSeconds float64 `json:"target_load_cpu_s,omitempty"`
	// ClientLoadSeconds is how long the client's load phase lasted: the part of its life the
	// figures below are judged on (see loadPhase: from 10% to 90% of its CPU time).
	ClientLoadSeconds float64 `json:"client_load_s"`
	// ClientIdleCPUSeconds is the CPU time left idle on the client's CPUs during its load phase
	// (/proc/stat idle+iowait of each): CPU the client could still have used.
	ClientIdleCPUSeconds float64 `json:"client_idle_cpu_s"`
	// ClientCPUUtil is the client's CPU / (its CPU + ClientIdleCPUSeconds) over its load phase:
	// not wall × CPUs, as what the target and upstream used on shared CPUs was never the client's.
	ClientCPUUtil float64 `json:"client_cpu_util"`
	// ClientCPUShare is the client's share of all the CPU used on its CPUs during its load phase
	// (its CPU / (ClientLoadSeconds × ClientCPUs − ClientIdleCPUSeconds)): who else used them.
	ClientCPUShare float64 `json:"client_cpu_share"`
	ClientCPUs     int     `json:"client_cpus"` // CPUs k6 could run on; 0: the client was not measured
	// ClientBound: the client, not the target, set the pace (verdict.ClientBound of
	// ClientCPUUtil and ClientCPUShare).
	ClientBound bool `json:"client_bound"`

	// The machine's CPU while the sampler ran; Other* is what was not the target's, the client's
	// or the upstream's (share: of wall × CPUs). OutsideLoad: that share is over verdict.OutsideLoadShare.
	MachineCPUSeconds float64 `json:"machine_cpu_s,omitempty"`
	OtherCPUSeconds   float64 `json:"other_cpu_s,omitempty"`
	OtherCPUShare     float64 `json:"other_cpu_share,omitempty"`
	OutsideLoad       bool    `json:"outside_load,omitempty"`
	// LoadHost is the load host's own outside load when the stack ran on another host (Apart):
	// the figures above are then the stack host's. nil: one host.
	LoadHost *HostOutside `json:"load_host,omitempty"`

	Samples int `json:"samples"`
}

// HostOutside is one host's outside load over a run, as Resources says the stack host's.
type HostOutside struct {
	MachineCPUSeconds float64 `json:"machine_cpu_s"`
	OtherCPUSeconds   float64 `json:"other_cpu_s"`
	OtherCPUShare     float64 `json:"other_cpu_share"`
	OutsideLoad       bool    `json:"outside_load"`
}

// Apart is a run's figures when the client and the stack ran on two hosts: the target's, the
// upstream's and the stack host's outside load from stackHost (its agent's sampler), the
// client's from loadHost (the load host's sampler, whose target is the controller itself), and
// the load host's outside load kept beside. The target's CPU over the client's load phase is
// left out: the two samplers' clocks are not one, so ClientOverTarget takes the whole figures.
func Apart(stackHost, loadHost Resources) Resources {
	r := stackHost
	r.ClientCPUSeconds = loadHost.ClientCPUSeconds
	r.ClientLoadCPUSeconds, r.TargetLoadCPUSeconds = 0, 0
	r.ClientLoadSeconds = loadHost.ClientLoadSeconds
	r.ClientIdleCPUSeconds = loadHost.ClientIdleCPUSeconds
	r.ClientCPUUtil, r.ClientCPUShare = loadHost.ClientCPUUtil, loadHost.ClientCPUShare
	r.ClientCPUs, r.ClientBound = loadHost.ClientCPUs, loadHost.ClientBound
	if loadHost.MachineCPUSeconds > 0 {
		r.LoadHost = &HostOutside{
			MachineCPUSeconds: loadHost.MachineCPUSeconds, OtherCPUSeconds: loadHost.OtherCPUSeconds,
			OtherCPUShare: loadHost.OtherCPUShare, OutsideLoad: loadHost.OutsideLoad,
		}
	}
	return r
}

// Outside is the run's outside load as a result keeps it: the larger share of the stack's
// host and the load host's, over when either was; ok is false when neither machine's CPU
// could be read.
func (r *Resources) Outside() (share float64, over, ok bool) {
	if r.MachineCPUSeconds > 0 {
		share, over, ok = r.OtherCPUShare, r.OutsideLoad, true
	}
	if h := r.LoadHost; h != nil && h.MachineCPUSeconds > 0 {
		share, over, ok = max(share, h.OtherCPUShare), over || h.OutsideLoad, true
	}
	return share, over, ok
}

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

// clientPoint is the client's CPU (clock ticks since it started), its CPUs' idle time (clock
// ticks since boot) and the target's CPU (clock ticks over the cell) at one time.
type clientPoint struct {
	at                time.Time
	cpu, idle, target uint64
}

// loadPhase is the part of the client's life that the utilisation is judged on: from the
// sample by which it had used 10% of its CPU time to the one by which it had used 90%, the
// load itself, without k6's start-up (the script's compilation), the gap after the warm-up
// nor setup() and the summary, whose idle time would dilute a client that was flat out while
// the load ran. The whole life when that part is shorter than a second or has too few samples.
// phase tells which: false for the whole life.
func loadPhase(tr []clientPoint) (from, to clientPoint, phase bool) {
	from, to = tr[0], tr[len(tr)-1]
	total := to.cpu - tr[0].cpu
	i := slices.IndexFunc(tr, func(p clientPoint) bool { return (p.cpu-tr[0].cpu)*10 >= total })
	j := slices.IndexFunc(tr, func(p clientPoint) bool { return (p.cpu-tr[0].cpu)*10 >= total*9 })
	if total == 0 || i < 0 || j-i < 5 || tr[j].at.Sub(tr[i].at) < time.Second {
		return from, to, false
	}
	return tr[i], tr[j], true
}

// ClientOverTarget is the client's CPU over the target's while the load ran: over the client's
// load phase when it had one, else over their whole figures; 0 when the target used none.
func (r *Resources) ClientOverTarget() float64 {
	if r.ClientLoadCPUSeconds > 0 && r.TargetLoadCPUSeconds > 0 {
		return r.ClientLoadCPUSeconds / r.TargetLoadCPUSeconds
	}
	if r.TargetCPUSeconds > 0 {
		return r.ClientCPUSeconds / r.TargetCPUSeconds
	}
	return 0
}

// setClient fills the client figures judged over its load phase from what it used of its CPUs
// then: CPU seconds, the CPU seconds left idle on its CPUs, wall seconds, and its number of
// CPUs. (ClientCPUSeconds is the client's whole life's: the caller's.)
//
// Whether that makes the run client-bound is verdict.ClientBound's to say.
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
	r.ClientBound = verdict.ClientBound(r.ClientCPUUtil, r.ClientCPUShare)
}
