package result

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/extensions/histogram"
	"github.com/proxybench/proxybench/verdict"
)

// SegmentPart is what the script of one execution segment adds to its result
// (scenarios/lib/summary.js, segmentPart): the trends behind its latency figures and its test
// clock. The plan's totals rules are judged on the merged counts and plan.
type SegmentPart struct {
	ExecutionSegment string `json:"execution_segment"`
	Sequence         string `json:"sequence"`
	Trends           struct {
		Latency string            `json:"latency_ms"`
		TTFB    string            `json:"ttfb_ms"`
		Extra   map[string]string `json:"extra"`
	} `json:"trends"`
	ClockMs *struct {
		Min float64 `json:"min"`
		Max float64 `json:"max"`
	} `json:"clock_ms"`
}

// Instance is one k6 instance of a split run: its result, and what merging it needs.
type Instance struct {
	Result     *Result
	File       string // its result file, as the merged result names it (relative to its folder)
	Segment    *SegmentPart
	Histograms map[string]*histogram.Histogram // the measured scenario's trends (extensions/histout)
	// ClockOffsetMs is when its test clock started after the first instance's (its resume):
	// what its clock_ms readings are shifted by to share one time line with the others.
	ClockOffsetMs float64
}

// Label names the instance in the merged result's reasons: "segment 2/2 (1/2:1)".
func (in *Instance) Label(i, n int) string {
	if in.Segment != nil && in.Segment.ExecutionSegment != "" {
		return fmt.Sprintf("segment %d/%d (%s)", i+1, n, in.Segment.ExecutionSegment)
	}
	return fmt.Sprintf("segment %d/%d", i+1, n)
}

// LoadInstance reads the result file of one instance with its segment part and histograms.
func LoadInstance(path string) (*Instance, error) {
	res, err := LoadResult(path)
	if err != nil {
		return nil, err
	}
	return &Instance{Result: res, File: path, Segment: res.Segment, Histograms: res.Histograms}, nil
}

// SegmentSummary is one instance as the merged result lists it (`segments`).
type SegmentSummary struct {
	File             string   `json:"file"`
	ExecutionSegment string   `json:"execution_segment"`
	ClockOffsetMs    float64  `json:"clock_offset_ms"`
	Requests         float64  `json:"requests"`
	Valid            bool     `json:"valid"`
	Invalid          []string `json:"invalid"`
}

// Merged is a split run as one result: what its instances measured, added up.
type Merged struct {
	Result     *Result
	Histograms map[string]*histogram.Histogram
	Segments   []SegmentSummary
}

// Merge makes one result of the instances of a split run. Counts add up; the latency figures
// come from the merged histograms, never from the instances' percentiles (a mean of p99s is
// no p99); req/s is over DURATION (reused) or over the whole run's window, from the first
// instance's first request to the last one's last (fresh). It is valid only if every instance
// is (the rules that add up: checks, failed requests, protocol, drops) and the merged totals
// keep the plan's rules (fresh: every one of REQUESTS done, each on a new connection; reused:
// no more connections than the plan allows); every reason says which instance, or that it is
// the totals.
func Merge(insts []*Instance) (*Merged, error) {
	if len(insts) == 0 {
		return nil, errors.New("merge: no instance")
	}
	n := len(insts)
	first := insts[0].Result
	out := *first
	out.Requests, out.FailedRequests, out.DroppedIterations = 0, 0, 0
	out.Checks.Passes, out.Checks.Fails = 0, 0
	out.ProtosSeen = map[string]float64{}
	out.NewConnections, out.LateRequests, out.RPS = nil, nil, nil
	out.UpstreamConns, out.Extra = nil, map[string]Stats{}
	out.Latency, out.TTFB = Stats{}, Stats{}
	out.Invalid, out.Err, out.TimedOut = nil, "", false
	// the lists and tallies start empty, not absent: the file has them as the schema says
	out.Counts = &verdict.Counts{
		SetupOK: true, BadResponses: map[string]float64{}, FailedChecks: []string{}, FailedThresholds: []string{}, Findings: []string{},
	}
	out.Segment, out.UpstreamRequests = nil, nil

	m := &Merged{Result: &out, Histograms: map[string]*histogram.Histogram{}}
	t := &tally{clockMin: math.Inf(1), clockMax: math.Inf(-1)}
	for i, in := range insts {
		if err := m.add(t, in, i, n); err != nil {
			return nil, err
		}
	}
	seg := firstSegment(insts)
	if seg != nil {
		out.Latency = m.stats(seg.Trends.Latency)
		out.TTFB = m.stats(seg.Trends.TTFB)
		for k, trend := range seg.Trends.Extra {
			if h := m.Histograms[trend]; h != nil && h.Count() > 0 {
				out.Extra[k] = statsOf(h)
			}
		}
	}
	if err := m.window(insts, t); err != nil {
		return nil, err
	}
	out.Counts.ConnectionsOpened = t.opened
	out.Counts.Findings = append(out.Counts.Findings, t.invalid...)
	out.Segments = m.Segments
	if len(t.errs) > 0 {
		out.Err = strings.Join(t.errs, "; ")
	}
	out.Judge()
	return m, nil
}

// tally is what Merge gathers from the instances besides the result's own sums.
type tally struct {
	invalid, errs      []string
	opened             *float64 // nil once an instance did not count them
	clockMin, clockMax float64  // the test clock at the first and last measured iteration
}

// add sums instance i of n into m's result and t; an instance of another cell is an error.
func (m *Merged) add(t *tally, in *Instance, i, n int) error {
	out, r, label := m.Result, in.Result, in.Label(i, n)
	if i > 0 && (r.Scenario != out.Scenario || r.Target != out.Target || r.Proto != out.Proto) {
		return fmt.Errorf("merge: %s is %s %s %s, the first is %s %s %s: not one run", label,
			r.Scenario, r.Target, r.Proto, out.Scenario, out.Target, out.Proto)
	}
	out.Requests += r.Requests
	out.FailedRequests += r.FailedRequests
	out.DroppedIterations += r.DroppedIterations
	out.Checks.Passes += r.Checks.Passes
	out.Checks.Fails += r.Checks.Fails
	for p, c := range r.ProtosSeen {
		out.ProtosSeen[p] += c
	}
	out.NewConnections = addOpt(out.NewConnections, r.NewConnections, i == 0)
	out.LateRequests = addOpt(out.LateRequests, r.LateRequests, i == 0)
	if r.TimedOut {
		out.TimedOut = true
	}
	if r.Err != "" {
		t.errs = append(t.errs, label+": "+r.Err)
	}
	if r.Counts == nil {
		t.invalid = append(t.invalid, label+": its result has no counts: written by another version of proxybench")
	} else {
		out.Counts.Add(r.Counts, label)
	}
	if r.Plan != nil && out.Plan == nil {
		out.Plan = r.Plan
	}
	m.Segments = append(m.Segments, SegmentSummary{
		File: in.File, ClockOffsetMs: in.ClockOffsetMs, Requests: r.Requests,
		Valid: r.Valid, Invalid: NonNil(r.Invalid),
	})
	if in.Segment == nil {
		t.invalid = append(t.invalid, label+": its result has no segment part: the script did not run as an execution segment")
		return nil
	}
	m.Segments[i].ExecutionSegment = in.Segment.ExecutionSegment
	var opened *float64
	if r.Counts != nil {
		opened = r.Counts.ConnectionsOpened
	}
	t.opened = addOpt(t.opened, opened, i == 0)
	if c := in.Segment.ClockMs; c != nil {
		t.clockMin = math.Min(t.clockMin, c.Min+in.ClockOffsetMs)
		t.clockMax = math.Max(t.clockMax, c.Max+in.ClockOffsetMs)
	}
	if len(in.Histograms) == 0 && r.Requests > 0 {
		t.invalid = append(t.invalid, label+": no histograms in its result (a bin/k6 without the proxybench-histograms output: make k6-build)")
	}
	for k, h := range in.Histograms {
		if m.Histograms[k] == nil {
			m.Histograms[k] = &histogram.Histogram{}
		}
		m.Histograms[k].Merge(h)
	}
	return nil
}

// window sets the merged run's duration and req/s: a fresh run's from the first instance's
// first iteration to the last one's last; every reused instance measures the same DURATION.
func (m *Merged) window(insts []*Instance, t *tally) error {
	out := m.Result
	switch out.Mode {
	case "fresh":
		out.DurationS = 0
		if t.clockMax > t.clockMin {
			out.DurationS = Round((t.clockMax-t.clockMin)/1000, 3)
		}
	default:
		for i, in := range insts[1:] {
			if in.Result.DurationS != out.DurationS {
				return fmt.Errorf("merge: %s measured %v s, the first %v s: not one run", in.Label(i+1, len(insts)), in.Result.DurationS, out.DurationS)
			}
		}
	}
	counted := out.Requests
	if out.LateRequests != nil {
		counted -= *out.LateRequests
	}
	if out.DurationS > 0 && out.Mode != "probe" {
		rps := Round(counted/out.DurationS, 1)
		out.RPS = &rps
	}
	return nil
}

// firstSegment is the first instance's segment part: every instance runs the same script with
// the same knobs, so the plan's figures and trends are the same in all.
func firstSegment(insts []*Instance) *SegmentPart {
	for _, in := range insts {
		if in.Segment != nil {
			return in.Segment
		}
	}
	return nil
}

func (m *Merged) stats(trend string) Stats {
	h := m.Histograms[trend]
	if h == nil || h.Count() == 0 {
		return Stats{}
	}
	return statsOf(h)
}

// statsOf is a trend's figures from its histogram, as summary.js rounds k6's: avg, min and
// max exact, the percentiles within histogram.RelErr.
func statsOf(h *histogram.Histogram) Stats {
	return Stats{
		Avg: Round(h.Mean(), 3), Min: Round(h.Min(), 3), Max: Round(h.Max(), 3),
		P50: Round(h.Quantile(0.5), 3), P90: Round(h.Quantile(0.9), 3),
		P95: Round(h.Quantile(0.95), 3), P99: Round(h.Quantile(0.99), 3),
	}
}

// Round rounds x to digits decimals, as the result file writes its figures.
func Round(x float64, digits int) float64 {
	f := math.Pow(10, float64(digits))
	return math.Round(x*f) / f
}

// addOpt adds an optional count: absent in any instance is absent in the sum (the figure was
// not measured by all of them), which first starts.
func addOpt(sum, v *float64, first bool) *float64 {
	if v == nil || (sum == nil && !first) {
		return nil
	}
	s := *v
	if sum != nil {
		s += *sum
	}
	return &s
}

// NonNil is s, or an empty list for nil: the result file writes "invalid": [], never null.
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// instanceOnly are the fields of an instance's result file that stay in it: its k6 summary data,
// its segment part and its histograms (the merged ones replace them). Every other field of the
// first instance's file (url, config, duration_from, …) is carried over to the merged result.
var instanceOnly = []string{"k6", "segment", "histograms"}

// WriteMerged writes m as a result file at path: the first instance's file (raw, whatever it
// holds beyond Result) with the merged figures over it, the merged histograms, and the list of
// instances with their files.
func WriteMerged(path, firstFile string, m *Merged) error {
	drop := slices.Clone(instanceOnly)
	r := m.Result
	fields := map[string]any{
		"requests":           r.Requests,
		"failed_requests":    r.FailedRequests,
		"checks":             map[string]float64{"passes": r.Checks.Passes, "fails": r.Checks.Fails},
		"protos_seen":        r.ProtosSeen,
		"dropped_iterations": r.DroppedIterations,
		"new_connections":    r.NewConnections,
		"late_requests":      r.LateRequests,
		"rps":                r.RPS,
		"duration_s":         r.DurationS,
		"latency_ms":         r.Latency,
		"ttfb_ms":            r.TTFB,
		"extra":              r.Extra,
		"counts":             r.Counts,
		"plan":               r.Plan,
		"valid":              r.Valid,
		"invalid":            r.Invalid,
		"histograms":         m.Histograms,
		"segments":           m.Segments,
	}
	if r.Mode == "fresh" {
		fields["duration_from"] = "first iteration start of the first instance to last iteration end of the last (their test clocks aligned by when each was resumed)"
	}
	if r.UpstreamConns != nil {
		fields["upstream_conns"] = r.UpstreamConns
	}
	if r.UpstreamRequests != nil {
		fields["upstream_requests"] = r.UpstreamRequests
	}
	if r.OfferedStreams != nil {
		fields["offered_streams"] = *r.OfferedStreams
	}
	if r.Err != "" {
		fields["error"] = r.Err
	}
	// absent, not null, as the scripts leave a figure out that a mode does not have
	for k, v := range map[string]*float64{"new_connections": r.NewConnections, "late_requests": r.LateRequests, "rps": r.RPS} {
		if v == nil {
			delete(fields, k)
			drop = append(drop, k)
		}
	}
	return PatchJSON(firstFile, path, drop, fields)
}

// SegmentBound is i/n as k6 writes execution segment bounds: 0, 1/2, 1.
func SegmentBound(i, n int) string {
	switch i {
	case 0:
		return "0"
	case n:
		return "1"
	}
	return fmt.Sprintf("%d/%d", i, n)
}
