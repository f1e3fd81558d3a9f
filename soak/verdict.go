package soak

import (
	"fmt"

	"github.com/proxybench/proxybench/internal/result"
)

// A soak runs the stress profile's reused scenario against one target for many minutes, and
// follows the memory (RSS of the whole process tree) and the open file descriptors of k6, the
// target and the upstream while it runs. What it judges is growth: the median of the samples
// in the first windowFraction of the measured time (after k6's warm-up) is the baseline, that of
// the last windowFraction the end, and the end may exceed the baseline by the bounds below and no
// more.
//
// Why these numbers (measured here, 2 CPUs, stress profile, reused-h1c against nginx at
// 6,000 to 7,000 req/s for 2 minutes, and at 4 connections for 30 s):
//
//   - k6 keeps every sample of every Trend in memory for its end-of-test summary (percentiles
//     need them all), so its RSS grows with the number of requests by design, not by a leak.
//     A reused-h1c request adds 11 Trend samples of 8 bytes (http_req_blocked, _connecting,
//     _tls_handshaking, _sending, _waiting, _receiving, _duration, iteration_duration and the
//     submetrics the thresholds and the summary select: 84 MiB per million requests), and
//     k6's RSS grew by 178 to 206 MiB per million (k6MeasuredMiBPerMillion): the samples, the
//     slices that double as they grow and Go's heap, collected at twice the live size. k6's
//     bound is therefore a rate: k6SlackMiB plus k6MiBPerMillion per million requests sent
//     between the middles of the two windows, room for the heap's steps (the end window's
//     median can sit on a high step, the baseline's on a low one) so that a healthy run passes
//     at any length (1.5 times what was measured), while k6 holding some 100 bytes a request
//     beyond its samples, or 64 MiB whatever the requests, fails.
//   - A proxy and the upstream hold what they need once warm (buffers, pools, connections):
//     nginx and the upstream moved by less than 0.2 MiB over the run. procRSSSlackMiB and
//     procRSSGrowth leave room for allocator noise and a Go or Rust proxy's heap settling,
//     and still fail a leak of 40 MiB over the run (12 bytes a request in a 10-minute soak
//     at that rate).
//   - Connections are reused (one per VU, opened in the warm-up), so the open descriptors of
//     every process are flat once warm (k6 110, nginx 222, upstream 112, ±1): fdSlack allows
//     for a proxy's pool to the upstream opening a few more under load, not for a descriptor
//     per request or per minute.
const (
	windowFraction          = 0.20  // of the measured time: the baseline's and the end's windows
	k6MeasuredMiBPerMillion = 200.0 // k6's RSS growth per million requests, measured (above)
	k6MiBPerMillion         = 300.0 // k6's bound: growth per million requests …
	k6SlackMiB              = 64.0  // … plus this, whatever the request count
	procRSSSlackMiB         = 32.0  // target, upstream: growth of at most this …
	procRSSGrowth           = 0.25  // … plus this fraction of the baseline
	fdSlack                 = 16    // every process: open descriptors may exceed the baseline by this
)

// Bound is what a process may grow by, for one metric.
type Bound struct {
	Metric string `json:"metric"` // rss_mib, fds
	Rule   string `json:"rule"`   // in words, as printed
	// Allowed is the growth allowed for this run (for k6's RSS: with its request count).
	Allowed float64 `json:"allowed"`
}

// Verdict is one process's metric judged.
type Verdict struct {
	Role     string  `json:"role"`
	Name     string  `json:"name"`
	Bound    Bound   `json:"bound"`
	Baseline float64 `json:"baseline"` // median of the baseline window (RSS: MiB)
	End      float64 `json:"end"`      // median of the end window
	Growth   float64 `json:"growth"`   // End - Baseline
	OK       bool    `json:"ok"`
	// Why is set when the metric could not be judged (no samples in a window).
	Why string `json:"why,omitempty"`
	// BaselineSamples and EndSamples are how many samples each median is of.
	BaselineSamples int `json:"baseline_samples"`
	EndSamples      int `json:"end_samples"`
}

const mib = 1 << 20

// bounds are the bounds of a process's RSS and fds; requests is how many k6 sent between
// the two windows' middles (for k6's RSS).
func bounds(role string, baselineRSSMiB, requests float64) (rss, fds Bound) {
	fds = Bound{Metric: "fds", Rule: fmt.Sprintf("+%d descriptors", fdSlack), Allowed: fdSlack}
	if role == roleK6 {
		m := requests / 1e6
		rss = Bound{
			Metric:  "rss_mib",
			Rule:    fmt.Sprintf("+%.0f MiB + %.0f MiB per million requests (%.2f M)", k6SlackMiB, k6MiBPerMillion, m),
			Allowed: k6SlackMiB + k6MiBPerMillion*m,
		}
		return rss, fds
	}
	rss = Bound{
		Metric:  "rss_mib",
		Rule:    fmt.Sprintf("+%.0f MiB + %.0f%% of the baseline", procRSSSlackMiB, procRSSGrowth*100),
		Allowed: procRSSSlackMiB + procRSSGrowth*baselineRSSMiB,
	}
	return rss, fds
}

// judge compares, for every process, the median of its samples in the first windowFraction of
// the measured window w with that of the last; rps is k6's request rate over w.
func judge(procs []*Process, samples []Sample, w Window, rps float64) []Verdict {
	base, end := w.baseline(), w.end()
	// between the middles of the two windows
	requests := rps * ((end.From + end.To) - (base.From + base.To)) / 2
	var out []Verdict
	for _, p := range procs {
		var bRSS, eRSS, bFD, eFD []float64
		for _, s := range samples {
			u := s.Procs[p.Role]
			if u == nil {
				continue
			}
			if base.holds(s.T) {
				bRSS, bFD = append(bRSS, float64(u.RSSBytes)/mib), append(bFD, float64(u.FDs))
			}
			if end.holds(s.T) {
				eRSS, eFD = append(eRSS, float64(u.RSSBytes)/mib), append(eFD, float64(u.FDs))
			}
		}
		rssBound, fdBound := bounds(p.Role, median(bRSS), requests)
		for _, m := range []struct {
			b     Bound
			bs, e []float64
		}{{rssBound, bRSS, eRSS}, {fdBound, bFD, eFD}} {
			v := Verdict{Role: p.Role, Name: p.Name, Bound: m.b, BaselineSamples: len(m.bs), EndSamples: len(m.e)}
			switch {
			case len(m.bs) == 0:
				v.Why = fmt.Sprintf("no sample in the baseline window (%.0f–%.0f s)", base.From, base.To)
			case len(m.e) == 0:
				v.Why = fmt.Sprintf("no sample in the end window (%.0f–%.0f s): not running then?", end.From, end.To)
			default:
				v.Baseline, v.End = median(m.bs), median(m.e)
				v.Growth = v.End - v.Baseline
				v.OK = v.Growth <= m.b.Allowed
			}
			out = append(out, v)
		}
	}
	return out
}

func boundsDoc() map[string]any {
	return map[string]any{
		"window_fraction":             windowFraction,
		"k6_measured_mib_per_million": k6MeasuredMiBPerMillion,
		"k6_rss_mib_per_million":      k6MiBPerMillion,
		"k6_rss_slack_mib":            k6SlackMiB,
		"proc_rss_slack_mib":          procRSSSlackMiB,
		"proc_rss_growth":             procRSSGrowth,
		"fd_slack":                    fdSlack,
	}
}

// median is result.Summarize's: the one median of the project's figures.
func median(xs []float64) float64 { return result.Summarize(xs).Median }
