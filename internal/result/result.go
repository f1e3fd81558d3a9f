// Package result is the result file a scenario writes (scenarios/lib/summary.js) and the
// runner completes: its Go types, reading it, its verdict (package verdict judges), and the
// merge of a split run's instances.
package result

import (
	"fmt"
	"os"

	"github.com/proxybench/proxybench/stack"
	"github.com/proxybench/proxybench/verdict"
)

// Stats are a trend's figures, in milliseconds.
type Stats struct {
	Avg float64 `json:"avg"`
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Result is what a scenario's handleSummary writes (runner/README.md, "The result file").
type Result struct {
	Schema            int                             `json:"schema"`
	TestID            string                          `json:"testid"`
	Scenario          string                          `json:"scenario"`
	Target            string                          `json:"target"`
	Mode              string                          `json:"mode"`
	Proto             string                          `json:"proto"`
	Client            string                          `json:"client"` // what sent the requests: native, k6/http, k6/x/proxybench/http3 (scenarios/lib/config.js)
	ExpectedProto     string                          `json:"expected_proto"`
	Route             string                          `json:"route"`
	Profile           string                          `json:"profile"`
	DurationS         float64                         `json:"duration_s"`
	Requests          float64                         `json:"requests"`
	RPS               *float64                        `json:"rps"`
	FailedRequests    float64                         `json:"failed_requests"`
	Checks            struct{ Passes, Fails float64 } `json:"checks"`
	ProtosSeen        map[string]float64              `json:"protos_seen"`
	DroppedIterations float64                         `json:"dropped_iterations"`
	NewConnections    *float64                        `json:"new_connections,omitempty"`
	LateRequests      *float64                        `json:"late_requests,omitempty"`  // reused: answered after DURATION, not in RPS
	UpstreamConns     *UpstreamConns                  `json:"upstream_conns,omitempty"` // written by the runner
	TLS               *stack.Negotiated               `json:"tls,omitempty"`            // written by the runner: as verified at up
	Latency           Stats                           `json:"latency_ms"`
	TTFB              Stats                           `json:"ttfb_ms"`
	Extra             map[string]Stats                `json:"extra"`
	// Overload is set by equal-load on a target that could not sustain the offered rate
	// (dropped iterations): a result, not a reason the run is invalid.
	Overload string `json:"overload,omitempty"`
	// Counts and Plan are what the script counted and set out to do: what Judge draws the
	// verdict from. A result written before the verdict moved to Go has neither, and keeps the
	// verdict its script wrote.
	Counts *verdict.Counts `json:"counts,omitempty"`
	Plan   *verdict.Plan   `json:"plan,omitempty"`
	// Segment is set on one execution segment of a split run (its part, for Merge).
	Segment *struct {
		ExecutionSegment string `json:"execution_segment"`
	} `json:"segment,omitempty"`
	// UpstreamRequests and OfferedStreams are written by the runner: what the upstream answered
	// on the run's route, and the concurrent streams per connection the target offered (h2, h3).
	// Segments lists the instances a split run was merged from (Merge).
	Segments         []SegmentSummary  `json:"segments,omitempty"`
	UpstreamRequests *verdict.Upstream `json:"upstream_requests,omitempty"`
	OfferedStreams   *float64          `json:"offered_streams,omitempty"`
	// Pacing is a paced probe's timing of its parts (stream, sse): what the verdict judges a
	// stream held back by, and its stalls, which are a figure (scenarios/lib/probes.js).
	Pacing *verdict.Pacing `json:"pacing,omitempty"`
	// OutsideLoad is the machine's CPU that other processes than the run's used while it went
	// on, written by the runner when it sampled the run (nil: not measured).
	OutsideLoad *OutsideLoad `json:"outside_load,omitempty"`
	// Cost is the CPU each request cost, written by the runner when it sampled the run.
	Cost *Cost `json:"cost,omitempty"`
	// Faults are what the runner saw go wrong during the run that k6 could not (MarkInvalid).
	Faults  []string `json:"faults,omitempty"`
	Valid   bool     `json:"valid"`
	Invalid []string `json:"invalid"`

	// Skipped ("no h3") is set, with SkipReason, on a cell that was not run because its target
	// does not serve the protocol: not measured, so not valid, and not invalid either (Invalid
	// is empty). Written by the runner, not by a scenario.
	Skipped    string `json:"skipped,omitempty"`
	SkipReason string `json:"skip_reason,omitempty"`

	// Err is set by the runner when k6 did not produce a result at all.
	Err string `json:"-"`
	// TimedOut: k6 was stopped by the runner's Timeout, so the target may hang (Err says so).
	TimedOut bool `json:"-"`
}

// Cost is what one request of a sampled run cost the target's processes and the client, in CPU
// µs: for a fresh run, what a new connection costs (its handshake, accept and answer).
type Cost struct {
	TargetCPUMicros float64 `json:"target_cpu_us_per_req"`
	ClientCPUMicros float64 `json:"client_cpu_us_per_req"`
}

// OutsideLoad is the share of the machine's CPU time (wall × CPUs) that processes other than
// the client, the target and the upstream used during a run, and whether it is over
// OutsideLoadShare: a timing figure measured then is the machine's as much as the target's.
type OutsideLoad struct {
	CPUShare float64 `json:"cpu_share"`
	Over     bool    `json:"over"`
}

// Busy says whether the run saw outside load over OutsideLoadShare.
func (o *OutsideLoad) Busy() bool {
	return o != nil && o.Over
}

// LoadResult reads one result file.
func LoadResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	// Not strict: a result file carries more than Result reads (url, config, k6's summary).
	if err := stack.DecodeJSON(path, data, &r, false); err != nil {
		return nil, err
	}
	if r.Schema != ResultSchema {
		return nil, fmt.Errorf("%s: %s", path, SchemaMismatch("result", r.Schema, ResultSchema))
	}
	r.Judge()
	return &r, nil
}

// Judge sets Valid and Invalid from the run's counts, plan and what the runner saw beside it
// (package verdict: the one place the rules are). A result with no counts (written before
// the verdict moved to Go) keeps the verdict its script wrote.
func (r *Result) Judge() {
	if r.Counts == nil {
		return
	}
	r.Invalid = NonNil(verdict.Judge(r.run()))
	r.Valid = len(r.Invalid) == 0
}

// run is what the verdict is drawn from.
func (r *Result) run() verdict.Run {
	v := verdict.Run{
		Mode: r.Mode, ExpectedProto: r.ExpectedProto, Route: r.Route,
		Requests: r.Requests, FailedRequests: r.FailedRequests,
		Passes: r.Checks.Passes, Fails: r.Checks.Fails,
		ProtosSeen: r.ProtosSeen, Dropped: r.DroppedIterations, NewConnections: r.NewConnections,
		Segment: r.Segment != nil, Parts: len(r.Segments),
		Upstream: r.UpstreamRequests, OfferedStreams: r.OfferedStreams, Pacing: r.Pacing, Faults: r.Faults,
	}
	if r.Counts != nil {
		v.Counts = *r.Counts
	}
	if r.Plan != nil {
		v.Plan = *r.Plan
	}
	return v
}

// ResultSchema is the `schema` of the result files this proxybench writes and reads.
const ResultSchema = 1

// SchemaMismatch says that a file of kind ("result", "bench") has schema got where this
// proxybench reads want, and what that likely means.
func SchemaMismatch(kind string, got, want int) string {
	if got == 0 {
		return fmt.Sprintf("no %s schema (want %d): not a %s file of proxybench", kind, want, kind)
	}
	return fmt.Sprintf("%s schema %d, this proxybench reads schema %d: written by another version of proxybench", kind, got, want)
}

// MarkInvalid makes a finished run invalid after the fact, in res and in its result file at path
// (when k6 wrote one), for what the runner saw and k6 could not: its target died during the run.
// The fault is kept in the file (faults) for every later verdict of it.
func MarkInvalid(res *Result, path, why string) error {
	res.Faults = append(res.Faults, why)
	res.Valid = false
	res.Invalid = append(res.Invalid, why)
	res.Judge()
	if _, err := os.Stat(path); err != nil {
		return nil //nolint:nilerr // no result file (k6 wrote none): res alone carries the verdict
	}
	return AddToFile(path, map[string]any{"faults": res.Faults, "valid": res.Valid, "invalid": NonNil(res.Invalid)})
}
