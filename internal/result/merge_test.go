package result

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/extensions/histogram"
	"github.com/proxybench/proxybench/verdict"
)

func f64(v float64) *float64 { return &v }

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// hist is a histogram of count values from lo, each step further.
func hist(lo, step float64, count int) *histogram.Histogram {
	h := &histogram.Histogram{}
	for i := range count {
		h.Add(lo + float64(i)*step)
	}
	return h
}

const (
	freshKey  = "http_req_duration{scenario:fresh-h1c}"
	freshTTFB = "http_req_waiting{scenario:fresh-h1c}"
	reusedKey = "http_req_duration{scenario:reused-h2}"
)

// freshInstance is one of n instances of a fresh-h1c run of 2000 requests, which did requests
// of them (each on a new connection) between its clock's readings lo and hi (ms).
func freshInstance(i, n int, requests float64, lo, hi float64, h *histogram.Histogram) *Instance {
	r := &Result{
		Schema: Schema, Scenario: "fresh-h1c", Target: "direct", Mode: "fresh", Proto: "h1c", ExpectedProto: "HTTP/1.1",
		Requests: requests, ProtosSeen: map[string]float64{"HTTP/1.1": requests},
		NewConnections: f64(requests), Valid: true, Invalid: []string{},
		Counts: &verdict.Counts{Unit: "requests", Answered: requests, Iterations: requests, SetupOK: true},
		Plan:   &verdict.Plan{ExpectedRequests: f64(2000), InFlight: 32},
	}
	r.Checks.Passes = requests
	seg := &SegmentPart{ExecutionSegment: SegmentBound(i, n) + ":" + SegmentBound(i+1, n)}
	seg.Trends.Latency, seg.Trends.TTFB = freshKey, freshTTFB
	seg.ClockMs = &struct {
		Min float64 `json:"min"`
		Max float64 `json:"max"`
	}{lo, hi}
	return &Instance{Result: r, Segment: seg, Histograms: map[string]*histogram.Histogram{freshKey: h, freshTTFB: h}}
}

// reusedInstance is one of two instances of a reused-h2 run of 32 connections (35 allowed) over
// 10 s, which opened opened connections.
func reusedInstance(i int, requests, late, opened float64, h *histogram.Histogram) *Instance {
	r := &Result{
		Schema: Schema, Scenario: "reused-h2", Target: "nginx", Mode: "reused", Proto: "h2", ExpectedProto: "HTTP/2.0",
		DurationS: 10, Requests: requests, LateRequests: f64(late),
		ProtosSeen: map[string]float64{"HTTP/2.0": requests}, NewConnections: f64(0), Valid: true,
		Counts: &verdict.Counts{Unit: "requests", Answered: requests, Iterations: requests / 16, ConnectionsOpened: f64(opened), SetupOK: true},
		Plan:   &verdict.Plan{ConnectionsPlanned: f64(32), ConnectionsAllowed: f64(35), Streams: 16, InFlight: 512},
	}
	r.Checks.Passes = requests
	seg := &SegmentPart{ExecutionSegment: SegmentBound(i, 2) + ":" + SegmentBound(i+1, 2)}
	seg.Trends.Latency, seg.Trends.TTFB = reusedKey, reusedKey
	return &Instance{Result: r, Segment: seg, Histograms: map[string]*histogram.Histogram{reusedKey: h}}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		insts     func() []*Instance
		requests  float64
		rps       float64
		durationS float64
		invalid   []string // substrings, one per reason, in order
	}{{
		name: "fresh: counts add up, the window spans both clocks",
		insts: func() []*Instance {
			a := freshInstance(0, 2, 1000, 3, 403, hist(1, 0.01, 1000))
			b := freshInstance(1, 2, 1000, 2, 398, hist(5, 0.01, 1000))
			b.ClockOffsetMs = 10 // resumed 10 ms after a: its 398 is 408 on a's clock
			return []*Instance{a, b}
		},
		requests: 2000, durationS: 0.405, rps: 4938.3,
	}, {
		name: "fresh: a missing share fails the totals, not the instance",
		insts: func() []*Instance {
			a := freshInstance(0, 2, 1000, 0, 400, hist(1, 0.01, 1000))
			b := freshInstance(1, 2, 999, 0, 400, hist(1, 0.01, 999))
			return []*Instance{a, b}
		},
		requests: 1999, durationS: 0.4, rps: 4997.5,
		invalid: []string{"totals: 1999 requests completed, want 2000", "totals: 1999 iterations done, want 2000"},
	}, {
		name: "fresh: an instance whose share was nothing is no fault",
		insts: func() []*Instance {
			a := freshInstance(0, 2, 2000, 0, 400, hist(1, 0.01, 2000))
			b := freshInstance(1, 2, 0, 0, 0, nil)
			b.Histograms, b.Segment.ClockMs = map[string]*histogram.Histogram{}, nil
			return []*Instance{a, b}
		},
		requests: 2000, durationS: 0.4, rps: 5000,
	}, {
		name: "fresh: a reused connection in one instance fails the totals",
		insts: func() []*Instance {
			a := freshInstance(0, 2, 1000, 0, 400, hist(1, 0.01, 1000))
			b := freshInstance(1, 2, 1000, 0, 400, hist(1, 0.01, 1000))
			b.Result.NewConnections = f64(998)
			return []*Instance{a, b}
		},
		requests: 2000, durationS: 0.4, rps: 5000,
		invalid: []string{"totals: 1998 new connections for 2000 requests"},
	}, {
		name: "reused: late requests are left out of req/s, over DURATION",
		insts: func() []*Instance {
			return []*Instance{
				reusedInstance(0, 100000, 256, 16, hist(10, 0.001, 5000)),
				reusedInstance(1, 90000, 144, 16, hist(12, 0.001, 5000)),
			}
		},
		requests: 190000, durationS: 10, rps: 18960,
	}, {
		name: "reused: each instance within its share, the total over the allowance",
		insts: func() []*Instance {
			return []*Instance{
				reusedInstance(0, 1000, 0, 18, hist(10, 0.001, 500)),
				reusedInstance(1, 1000, 0, 18, hist(10, 0.001, 500)),
			}
		},
		requests: 2000, durationS: 10, rps: 200,
		invalid: []string{"totals: 36 connections opened by 2 instances for 32 planned (one per VU, at most 35"},
	}, {
		name: "reused: an instance that did not count its connections leaves reuse unproven",
		insts: func() []*Instance {
			a := reusedInstance(0, 1000, 0, 30, hist(10, 0.001, 500))
			b := reusedInstance(1, 1000, 0, 16, hist(10, 0.001, 500))
			a.Result.Counts.ConnectionsOpened = nil // the other's 16 alone would pass
			return []*Instance{a, b}
		},
		requests: 2000, durationS: 10, rps: 200,
		invalid: []string{"totals: not every instance counted the connections it opened"},
	}, {
		name: "an instance's failed checks hold the merged result invalid",
		insts: func() []*Instance {
			a := reusedInstance(0, 1000, 0, 16, hist(10, 0.001, 500))
			b := reusedInstance(1, 1000, 0, 16, hist(10, 0.001, 500))
			b.Result.Valid, b.Result.Invalid = false, []string{"3 of 1000 checks failed"}
			b.Result.Checks.Fails = 3
			return []*Instance{a, b}
		},
		requests: 2000, durationS: 10, rps: 200,
		invalid: []string{"3 of 2003 checks failed"},
	}, {
		name: "an instance without histograms: no percentiles to merge",
		insts: func() []*Instance {
			a := reusedInstance(0, 1000, 0, 16, hist(10, 0.001, 500))
			b := reusedInstance(1, 1000, 0, 16, nil)
			b.Histograms = nil
			return []*Instance{a, b}
		},
		requests: 2000, durationS: 10, rps: 200,
		invalid: []string{"segment 2/2 (1/2:1): no histograms"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			insts := tc.insts()
			m, err := Merge(insts)
			if err != nil {
				t.Fatal(err)
			}
			r := m.Result
			if r.Requests != tc.requests || r.DurationS != tc.durationS || r.RPS == nil || *r.RPS != tc.rps {
				t.Errorf("requests %v duration %v s rps %v, want %v, %v, %v", r.Requests, r.DurationS, deref(r.RPS), tc.requests, tc.durationS, tc.rps)
			}
			var checks, protos float64
			for _, in := range insts {
				checks += in.Result.Checks.Passes
			}
			for _, n := range r.ProtosSeen {
				protos += n
			}
			if r.Checks.Passes != checks || protos != r.Requests {
				t.Errorf("checks %v (want %v), protocols seen %v (want %v)", r.Checks.Passes, checks, protos, r.Requests)
			}
			if r.Valid != (len(tc.invalid) == 0) || len(r.Invalid) != len(tc.invalid) {
				t.Fatalf("valid %v, invalid %q, want %q", r.Valid, r.Invalid, tc.invalid)
			}
			for i, want := range tc.invalid {
				if !strings.Contains(r.Invalid[i], want) {
					t.Errorf("reason %d: %q, want %q in it", i, r.Invalid[i], want)
				}
			}
			if len(m.Segments) != len(insts) {
				t.Errorf("%d segments listed, want %d", len(m.Segments), len(insts))
			}
		})
	}
}

// The merged percentiles are those of every sample together: not the mean of the instances'
// (here 1 ms and 5 ms apart: a mean of p50s would be 3), and within RelErr of the exact figure
// of the two sample sets as one.
func TestMergePercentilesFromHistograms(t *testing.T) {
	t.Parallel()
	var all []float64
	a, b := &histogram.Histogram{}, &histogram.Histogram{}
	for i := range 3000 {
		v := 1 + float64(i%100)*0.001
		a.Add(v)
		all = append(all, v)
	}
	for i := range 1000 {
		v := 5 + float64(i%100)*0.01
		b.Add(v)
		all = append(all, v)
	}
	m, err := Merge([]*Instance{
		freshInstance(0, 2, 1000, 0, 1, a),
		freshInstance(1, 2, 1000, 0, 1, b),
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	exact := func(q float64) float64 {
		pos := q * float64(len(all)-1)
		lo := math.Floor(pos)
		i := int(lo)
		return all[i] + (pos-lo)*(all[min(i+1, len(all)-1)]-all[i])
	}
	got := m.Result.Latency
	for _, c := range []struct {
		name string
		q    float64
		got  float64
	}{{"p50", 0.5, got.P50}, {"p90", 0.9, got.P90}, {"p95", 0.95, got.P95}, {"p99", 0.99, got.P99}} {
		want := exact(c.q)
		// rounded to 3 digits as the scripts round
		if math.Abs(c.got-want) > want*histogram.RelErr+0.0005 {
			t.Errorf("%s = %v, want %v within %.2f%%", c.name, c.got, want, histogram.RelErr*100)
		}
	}
	if got.Min != 1 || got.Max != 5.99 {
		t.Errorf("min %v max %v, want 1 and 5.99 exactly", got.Min, got.Max)
	}
	if n := m.Histograms[freshKey].Count(); n != 4000 {
		t.Errorf("merged histogram holds %d values, want 4000", n)
	}
}

func TestMergeRefusesInstancesOfAnotherRun(t *testing.T) {
	t.Parallel()
	a := freshInstance(0, 2, 1000, 0, 1, hist(1, 0.01, 10))
	b := reusedInstance(1, 1000, 0, 16, hist(1, 0.01, 10))
	if _, err := Merge([]*Instance{a, b}); err == nil || !strings.Contains(err.Error(), "not one run") {
		t.Errorf("merge of fresh-h1c and reused-h2: %v, want an error saying not one run", err)
	}
}

// The merged file is a result like any other (LoadResult reads it, with the first instance's
// other fields carried over) and keeps the merged histograms; the instance's own k6 data stays
// in its file.
func TestWriteMerged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := filepath.Join(dir, "first.json")
	// the first instance's file, as summary.js writes it (the merge keeps what it does not sum)
	if err := os.WriteFile(first, fmt.Appendf(nil, `{"schema":%d,"testid":"t","scenario":"fresh-h1c","target":"direct","mode":"fresh","proto":"h1c",
		"client":"native","expected_proto":"HTTP/1.1","route":"/","url":"http://bench.test:9000/","profile":"smoke",
		"duration_s":0.4,"duration_from":"first iteration start to last iteration end","requests":1000,"rps":2500,"failed_requests":0,
		"checks":{"passes":1000,"fails":0},"protos_seen":{"HTTP/1.1":1000},"dropped_iterations":0,
		"latency_ms":null,"ttfb_ms":null,"extra":{},"config":{"target_origin":"http://bench.test:9000","address":"127.0.0.1","requests":2000},
		"counts":{"unit":"requests","answered":1000,"iterations":1000,"wrong_proto":0,"bad_responses":{},"failed_checks":[],"failed_thresholds":[],"setup_ok":true,"findings":[]},
		"plan":{"expected_requests":2000,"in_flight":32},"k6":{"metrics":{}},"segment":{"execution_segment":"0:1/2"},"histograms":{}}`, Schema), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Merge([]*Instance{
		freshInstance(0, 2, 1000, 0, 400, hist(1, 0.01, 1000)),
		freshInstance(1, 2, 1000, 0, 400, hist(1, 0.01, 1000)),
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "merged.json")
	if err := WriteMerged(path, first, m); err != nil {
		t.Fatal(err)
	}
	got, err := LoadInstance(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Result.Requests != 2000 || !got.Result.Valid || got.Result.Checks.Passes != 2000 {
		t.Errorf("merged file: requests %v valid %v checks %v", got.Result.Requests, got.Result.Valid, got.Result.Checks)
	}
	if h := got.Histograms[freshKey]; h == nil || h.Count() != 2000 {
		t.Errorf("merged file: no merged histogram of 2000 values: %v", got.Histograms)
	}
	var doc map[string]json.RawMessage
	data, _ := os.ReadFile(path)
	_ = json.Unmarshal(data, &doc)
	if err := Validate(data); err != nil {
		t.Errorf("the merged file does not follow the schema: %v", err)
	}
	for _, k := range []string{"url", "config", "segments"} {
		if doc[k] == nil {
			t.Errorf("merged file has no %s", k)
		}
	}
	for _, k := range []string{"k6", "segment", "late_requests"} {
		if doc[k] != nil {
			t.Errorf("merged file has %s: %s", k, doc[k])
		}
	}
}
