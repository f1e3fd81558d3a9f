package soak

import (
	"time"

	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/stack"
)

// Roles of the followed processes, the keys of a sample's processes.
const (
	roleK6       = "k6"
	roleTarget   = "target"
	roleUpstream = "upstream"
)

const schema = 1

// Report is results/<testid>/soak.json.
type Report struct {
	Schema      int               `json:"schema"`
	TestID      string            `json:"testid"`
	Target      string            `json:"target"`
	Proto       string            `json:"proto"`
	Scenario    string            `json:"scenario"`
	Profile     string            `json:"profile"`
	Minutes     float64           `json:"minutes"`
	IntervalS   float64           `json:"interval_s"`
	Started     time.Time         `json:"started"`
	Processes   []*Process        `json:"processes"`
	Samples     []Sample          `json:"samples"`
	Window      *Window           `json:"measured_window_s,omitempty"` // after the warm-up, in the samples' time
	RPS         float64           `json:"rps,omitempty"`
	Bounds      map[string]any    `json:"bounds"`
	Verdict     []Verdict         `json:"verdict,omitempty"`
	Pass        bool              `json:"pass"`
	Result      string            `json:"result,omitempty"` // the k6 result file
	Valid       bool              `json:"k6_valid"`
	Invalid     []string          `json:"k6_invalid,omitempty"`
	Interrupted bool              `json:"interrupted,omitempty"`
	Error       string            `json:"error,omitempty"`
	Resources   *sample.Resources `json:"target_resources,omitempty"`
}

// Process is a process the soak follows, with its whole tree.
type Process struct {
	Role string `json:"role"` // k6, target, upstream
	Name string `json:"name"` // k6, the target's name, direct
	PID  int    `json:"pid"`  // 0: not found (k6 before it started)
}

// Usage is one process tree's reading: RSS and open file descriptors.
type Usage struct {
	RSSBytes uint64 `json:"rss_bytes"`
	FDs      int    `json:"fds"`
}

// Sample is one reading of every process, at T seconds after the k6 run began.
type Sample struct {
	T     float64           `json:"t_s"`
	Procs map[string]*Usage `json:"procs"` // by role; a role missing: not running then
}

// samplesOf are the runner's readings as soak.json holds them, keyed by role as followed.
func samplesOf(in []sample.UsageSample) []Sample {
	var out []Sample // nil for none: soak.json says null then, as it always has
	for _, s := range in {
		smp := Sample{T: s.At.Seconds(), Procs: map[string]*Usage{}}
		for role, u := range s.Trees {
			smp.Procs[role] = &Usage{RSSBytes: u.RSSBytes, FDs: u.FDs}
		}
		out = append(out, smp)
	}
	return out
}

// save writes soak.json atomically: a reader never sees half of one.
func (r *Report) save(path string) error { return stack.WriteJSON(path, r) }
