// Package result is the result file a scenario writes (scenarios/lib/summary.js) and the
// runner completes: its Go types, reading it, its verdict (package verdict judges), and the
// merge of a split run's instances.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/proxybench/proxybench/extensions/histogram"
	"github.com/proxybench/proxybench/stack"
	"github.com/proxybench/proxybench/verdict"
)

// Stats are a trend's figures, in milliseconds (P999 only where the script asked k6 for it:
// equal load).
type Stats struct {
	Avg  float64 `json:"avg"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999,omitempty"`
	Max  float64 `json:"max"`
}

// Result is one run's result file, field for field as scenarios/result.schema.json declares it
// (TestResultMatchesTheSchema holds the two together): what a scenario's handleSummary writes,
// then what the runner adds. Every reader reads a result through it (LoadResult).
type Result struct {
	Schema            int                `json:"schema"`
	TestID            string             `json:"testid"`
	Scenario          string             `json:"scenario"`
	Target            string             `json:"target"`
	Mode              string             `json:"mode"`
	Proto             string             `json:"proto"`
	Client            string             `json:"client,omitempty"` // what sent the requests: native, k6/http, k6/x/proxybench/http3 (scenarios/lib/config.js)
	ExpectedProto     string             `json:"expected_proto,omitempty"`
	Route             string             `json:"route,omitempty"`
	URL               string             `json:"url,omitempty"` // without its query
	Profile           string             `json:"profile,omitempty"`
	DurationS         float64            `json:"duration_s"`
	DurationFrom      string             `json:"duration_from,omitempty"` // what DurationS spans
	Requests          float64            `json:"requests"`
	RPS               *float64           `json:"rps,omitempty"`
	FailedRequests    float64            `json:"failed_requests"`
	Checks            Checks             `json:"checks"`
	ProtosSeen        map[string]float64 `json:"protos_seen,omitempty"`
	DroppedIterations float64            `json:"dropped_iterations"`
	// WarmupDroppedIterations are k6's open model's iterations dropped in its warm-up: not the
	// measured run's, so not judged.
	WarmupDroppedIterations *float64 `json:"warmup_dropped_iterations,omitempty"`
	// BehindSchedule is the native open model's requests due while their connection still
	// carried the one before (nil: not the native open model): what verdict.Overload reads.
	BehindSchedule *float64          `json:"behind_schedule,omitempty"`
	NewConnections *float64          `json:"new_connections,omitempty"`
	LateRequests   *float64          `json:"late_requests,omitempty"`  // reused: answered after DURATION, not in RPS
	UpstreamConns  *UpstreamConns    `json:"upstream_conns,omitempty"` // written by the runner
	TLS            *stack.Negotiated `json:"tls,omitempty"`            // written by the runner: as verified at up
	Latency        Stats             `json:"latency_ms"`
	TTFB           Stats             `json:"ttfb_ms"`
	Extra          map[string]Stats  `json:"extra,omitempty"`
	// Config is the scenario's knobs as the run took them (duration, connections, rate, …):
	// reported, never judged.
	Config map[string]any `json:"config,omitempty"`
	// Overload says why an equal-load run did not sustain its rate: verdict.Overload's, set by
	// Judge (and written into the file by the runner with the verdict). A result, not a reason
	// the run is invalid.
	Overload string `json:"overload,omitempty"`
	// Counts and Plan are what the script counted and set out to do: what Judge draws the
	// verdict from. A result written before the verdict moved to Go has neither, and keeps the
	// verdict its script wrote.
	Counts *verdict.Counts `json:"counts,omitempty"`
	Plan   *verdict.Plan   `json:"plan,omitempty"`
	// Segment is set on one execution segment of a split run (its part, for Merge), and
	// Histograms on it and on the merged result: every trend of the measured scenario, by
	// submetric name (extensions/histout), which is what merges.
	Segment    *SegmentPart                    `json:"segment,omitempty"`
	Histograms map[string]*histogram.Histogram `json:"histograms,omitempty"`
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
	// Idle is an idle run's plan and windows (scenarios/lib/idle.js); IdleCost what holding
	// its connections cost the target, written by the runner from its samples (idle.go).
	Idle     *Idle     `json:"idle,omitempty"`
	IdleCost *IdleCost `json:"idle_cost,omitempty"`
	// K6 is k6's own summary data (handleSummary's argument), of which the Go side reads the
	// metrics' values (AllRequests).
	K6 *K6Summary `json:"k6,omitempty"`
	// Body is what a run of the body-size sweep (mode bodies) moved: its direction, size and
	// MB/s, and the target's CPU per MB (body.go); nil for every other run.
	Body *Body `json:"body,omitempty"`
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

// AllRequests is the requests (and WebSocket sessions) k6 sent during the run: k6's own
// `http_reqs` count over the whole run, warm-up and setup() included, unlike Requests, which
// counts the measured window only. The target's CPU covers the whole run, so this is the count
// to divide it by.
func (r *Result) AllRequests() (float64, error) {
	if r.K6 == nil {
		return 0, errors.New("no k6 summary data in the result")
	}
	if _, ok := r.K6.Metrics["http_reqs"]; !ok {
		return 0, errors.New("no k6 http_reqs metric in the result")
	}
	// WebSocket sessions are no http_reqs; each is a connection and an upgrade.
	return r.K6.Count("http_reqs") + r.K6.Count("ws_sessions"), nil
}

// AllRequests is the AllRequests of the result file at path.
func AllRequests(path string) (float64, error) {
	r, err := LoadResult(path)
	if err != nil {
		return 0, err
	}
	n, err := r.AllRequests()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// Checks are the measured scenario's checks that passed and failed.
type Checks struct {
	Passes float64 `json:"passes"`
	Fails  float64 `json:"fails"`
}

// K6Summary is the part of k6's summary data the Go side reads: each metric's values.
type K6Summary struct {
	Metrics map[string]struct {
		Values map[string]float64 `json:"values"`
	} `json:"metrics"`
	State struct {
		TestRunDurationMs float64 `json:"testRunDurationMs"` // from k6's start to its summary
	} `json:"state"`
}

// Count is the count of a k6 counter over the whole run (warm-up and setup included), 0 when
// the run had none.
func (k *K6Summary) Count(metric string) float64 {
	if k == nil {
		return 0
	}
	return k.Metrics[metric].Values["count"]
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
//
// A file that is JSON but plainly no result (not an object, or one with neither "schema" nor
// "scenario": k6's --summary-export, a note) is ErrNotResult; one of an older schema is
// converted first (convert.go); one of a newer schema, or none, is an error that says so.
func LoadResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return nil, fmt.Errorf("%s: %w", path, ErrNotResult) // JSON, but no object
		}
		return nil, stack.JSONError(path, data, err)
	}
	if doc["schema"] == nil && doc["scenario"] == nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNotResult)
	}
	converted, err := convert(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if converted {
		// an error's line and column are then the converted document's, not the file's
		if data, err = json.Marshal(doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	var r Result
	// Not strict: k6's summary data carries more than K6Summary reads.
	if err := stack.DecodeJSON(path, data, &r, false); err != nil {
		return nil, err
	}
	if r.Scenario == "" {
		return nil, fmt.Errorf("%s: no scenario: not a result file of proxybench", path)
	}
	r.Judge()
	return &r, nil
}

// ErrNotResult is a JSON file that is plainly something else than a result.
var ErrNotResult = errors.New("not a result file")

// Judge sets Valid and Invalid from the run's counts, plan and what the runner saw beside it
// (package verdict: the one place the rules are). A result with no counts (written before
// the verdict moved to Go) keeps the verdict its script wrote.
func (r *Result) Judge() {
	run := r.run()
	// whether an open model sustained its rate needs no counts: its figures say it
	r.Overload = verdict.Overload(run)
	if r.Counts == nil {
		return
	}
	r.Invalid = NonNil(verdict.Judge(run))
	r.Valid = len(r.Invalid) == 0
}

// Held says why the run, a step of a capacity search, did not hold its rate within a p99 of
// goalMS, or "" when it did (verdict.Held).
func (r *Result) Held(goalMS float64) string {
	if r.Err != "" {
		return r.Err
	}
	return verdict.Held(r.run(), r.Latency.P99, goalMS)
}

// run is what the verdict is drawn from.
func (r *Result) run() verdict.Run {
	v := verdict.Run{
		Mode: r.Mode, ExpectedProto: r.ExpectedProto, Route: r.Route,
		Requests: r.Requests, FailedRequests: r.FailedRequests,
		Passes: r.Checks.Passes, Fails: r.Checks.Fails,
		ProtosSeen: r.ProtosSeen, Dropped: r.DroppedIterations, Behind: r.BehindSchedule, NewConnections: r.NewConnections, Late: r.LateRequests,
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
