package result

import (
	"time"
)

// Idle is an idle run's plan (scenarios/lib/idle.js): the connections to hold, the VUs that
// open them, the trickle of requests over a few of them, and the wall-clock bounds (ms since
// the epoch) of the opening (the warm-up) and of the hold (the measured scenario).
type Idle struct {
	Connections        float64   `json:"connections"`
	Openers            float64   `json:"openers"`
	TrickleConnections float64   `json:"trickle_connections"`
	TrickleRate        float64   `json:"trickle_rate"`
	OpenMS             []float64 `json:"open_ms"`
	HoldMS             []float64 `json:"hold_ms"`
}

// Hold is the hold's window, ok false when the script did not record it.
func (i *Idle) Hold() (from, to time.Time, ok bool) {
	if i == nil || len(i.HoldMS) != 2 || i.HoldMS[1] <= i.HoldMS[0] {
		return from, to, false
	}
	return time.UnixMilli(int64(i.HoldMS[0])), time.UnixMilli(int64(i.HoldMS[1])), true
}

// IdleCost is what holding an idle run's connections cost the target, from the runner's
// samples: its RSS before the run (before k6 started) and over the hold, that growth per
// connection held, and its CPU over the hold (the trickle's requests included: they are the
// hold's only work).
type IdleCost struct {
	RSSBeforeMB      float64 `json:"rss_before_mb"`
	RSSHeldMB        float64 `json:"rss_held_mb"`
	ConnectionsHeld  float64 `json:"connections_held"`
	KiBPerConnection float64 `json:"kib_per_connection"`
	CPUSeconds       float64 `json:"cpu_s"`
	CPUCores         float64 `json:"cpu_cores"` // CPUSeconds over HoldSeconds
	HoldSeconds      float64 `json:"hold_s"`
	Samples          int     `json:"samples"`
}

// NewIdleCost is the cost of holding held connections: RSS before and over the hold (MiB), the
// CPU used over holdS seconds of it.
func NewIdleCost(rssBeforeMB, rssHeldMB, held, cpuS, holdS float64, samples int) *IdleCost {
	c := &IdleCost{
		RSSBeforeMB: Round(rssBeforeMB, 2), RSSHeldMB: Round(rssHeldMB, 2), ConnectionsHeld: held,
		CPUSeconds: Round(cpuS, 3), HoldSeconds: Round(holdS, 2), Samples: samples,
	}
	if held > 0 {
		c.KiBPerConnection = Round((rssHeldMB-rssBeforeMB)*1024/held, 2)
	}
	if holdS > 0 {
		c.CPUCores = Round(cpuS/holdS, 4)
	}
	return c
}
