package influxdb

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"
)

func segmentOptions(t *testing.T, segment, sequence string) lib.Options {
	t.Helper()
	var o lib.Options
	if segment != "" {
		seg, err := lib.NewExecutionSegmentFromString(segment)
		require.NoError(t, err)
		o.ExecutionSegment = seg
	}
	if sequence != "" {
		seq, err := lib.NewExecutionSegmentSequenceFromString(sequence)
		require.NoError(t, err)
		o.ExecutionSegmentSequence = &seq
	}
	return o
}

// The instance id comes from the execution segment k6 hands the output; a whole test has none.
func TestInstanceOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		segment, sequence, id string
		share                 float64
	}{
		{"", "", "", 1},
		{"0:1", "", "", 1},
		{"0:1", "0,1", "", 1},
		// counted from 1, as the k6-operator numbers its runners
		{"0:1/2", "0,1/2,1", "1", 0.5},
		{"1/2:1", "0,1/2,1", "2", 0.5},
		{"1/3:2/3", "0,1/3,2/3,1", "2", 1.0 / 3},
		{"2/3:1", "0,1/3,2/3,1", "3", 1.0 / 3},
		{"1/2:3/4", "1/2,3/4,1", "2", 0.25}, // k6 fills the sequence: 0:1/2 comes first
		// without a sequence the place would be ambiguous: "1/2:3/4" would be 2 as well
		{"1/4:1/2", "", "1/4:1/2", 0.25},
		{"1/2:3/4", "", "1/2:3/4", 0.25},
	} {
		t.Run(tc.segment+" in "+tc.sequence, func(t *testing.T) {
			t.Parallel()
			in, err := instanceOf(segmentOptions(t, tc.segment, tc.sequence))
			require.NoError(t, err)
			assert.Equal(t, tc.id, in.id)
			assert.InDelta(t, tc.share, in.share, 1e-12)
		})
	}
}

// Every point of a split instance carries its instance_id, in both modes and whatever
// K6_INFLUXDB_AGGREGATE_TAGS says; an instance_id the samples carry (the k6-operator tags its
// runners) is kept; a run that isn't split has none of its own.
func TestInstanceTagOnEveryPoint(t *testing.T) {
	t.Parallel()
	s := newSampler()
	reqs := s.metric("http_reqs", metrics.Counter)
	dur := s.metric("http_req_duration", metrics.Trend)
	operator := s.tags("testid", "t", "target", "nginx", InstanceTag, "7")
	plain := s.tags("testid", "t", "target", "nginx")
	base := time.Unix(1_700_000_000, 0)
	for _, mode := range []string{ModeAggregate, ModeRaw} {
		for _, tc := range []struct {
			segment, sequence string
			tags              *metrics.TagSet
			want              string
		}{
			{"1/2:1", "0,1/2,1", plain, "2"},
			{"1/2:1", "0,1/2,1", operator, "7"},
			{"", "", operator, "7"},
			{"", "", plain, ""},
		} {
			samples := metrics.Samples{sample(reqs, tc.tags, base, 1), sample(dur, tc.tags, base, 3)}
			logger, _ := test.NewNullLogger()
			o, err := newOutput(output.Params{
				Logger: logger, ConfigArgument: "http://127.0.0.1:1/k6?mode=" + mode + "&aggregateTags=testid,target",
				ScriptOptions: segmentOptions(t, tc.segment, tc.sequence),
			})
			require.NoError(t, err)
			e := &encoder{}
			if o.agg != nil {
				o.agg.Add([]metrics.SampleContainer{samples})
				o.agg.encodeWindows(o.agg.closeWindows(base, true), e)
				o.agg.encodeRun(e)
			} else {
				o.raw.encode([]metrics.SampleContainer{samples}, e)
			}
			pts := parseLines(t, e.buf)
			require.NotEmpty(t, pts)
			for _, p := range pts {
				assert.Equal(t, tc.want, p.tags[InstanceTag], "%s %s: %+v", mode, tc.segment, p)
			}
			if tc.segment != "" {
				assert.Contains(t, o.Description(), "execution segment "+tc.segment)
			}
		}
	}
}

// splitFixture feeds the same known samples to one whole-test aggregator and, dealt between
// them, to two instances' (0:1/3 and 1/3:1: uneven, and each instance's latencies unlike the
// other's, so that a merge has something to get wrong), and returns each one's points.
func splitFixture(t *testing.T) (whole []parsedPoint, parts [2][]parsedPoint, values []float64) {
	t.Helper()
	s := newSampler()
	reqs := s.metric("http_reqs", metrics.Counter)
	dur := s.metric("http_req_duration", metrics.Trend)
	tags := s.tags("testid", "t", "target", "nginx", "status", "200", "scenario", "main")
	base := time.Unix(1_700_000_000, 0)
	rng := rand.New(rand.NewPCG(1, 2))

	mk := func(id string, share float64) *aggregator {
		return newAggregator(time.Second, DefaultAggregateTags, instance{id: id, share: share}, newHistogramSet(DefaultHistograms))
	}
	one, two := mk("", 1), [2]*aggregator{mk("1", 1.0/3), mk("2", 2.0/3)}
	for i := range 3000 {
		at := base.Add(time.Duration(i) * time.Millisecond) // three windows
		part := 0
		v := 0.2 + rng.ExpFloat64() // instance 0: fast
		if i%3 != 0 {
			part = 1
			v = 5 + 20*rng.Float64() // instance 1: slow
		}
		if i%500 == 7 {
			v = 0 // zeros and the grid's edges are merged too
		} else if i%700 == 9 {
			v = 1e6
		}
		values = append(values, v)
		c := metrics.Samples{sample(reqs, tags, at, 1), sample(dur, tags, at, v)}
		one.Add([]metrics.SampleContainer{c})
		two[part].Add([]metrics.SampleContainer{c})
	}
	encode := func(a *aggregator) []parsedPoint {
		e := &encoder{}
		a.encodeWindows(a.closeWindows(base, true), e)
		a.encodeRun(e)
		return parseLines(t, e.buf)
	}
	return encode(one), [2][]parsedPoint{encode(two[0]), encode(two[1])}, values
}

// sumBy adds field up per (measurement, agg, time, le) over everything else (instance_id).
func sumBy(pts []parsedPoint, measurement, fieldName string) map[string]float64 {
	out := map[string]float64{}
	for _, p := range pts {
		if p.measurement == measurement {
			out[p.tags["agg"]+" "+strconv.FormatInt(p.ts, 10)+" "+p.tags["le"]] += p.fields[fieldName]
		}
	}
	return out
}

// Two instances' bucket and cdf counts, summed over instance_id, are the whole test's counts
// exactly, and so are their requests; whole-run shares add up to one run.
func TestSplitBucketsMergeExactly(t *testing.T) {
	t.Parallel()
	whole, parts, values := splitFixture(t)
	for _, p := range whole {
		require.NotContains(t, p.tags, InstanceTag)
	}
	for i, pts := range parts {
		for _, p := range pts {
			require.Equal(t, strconv.Itoa(i+1), p.tags[InstanceTag], "%+v", p)
		}
	}
	runTime := func(pts []parsedPoint) int64 { return find(pts, "http_reqs", aggRun, nil)[0].ts }
	// whole-run points are stamped with each instance's last sample: compare them apart
	norm := func(pts []parsedPoint) []parsedPoint {
		end := runTime(pts)
		out := slices.Clone(pts)
		for i := range out {
			if out[i].tags["agg"] == aggRun {
				require.Equal(t, end, out[i].ts)
				out[i].ts = 0
			}
		}
		return out
	}
	both := append(norm(parts[0]), norm(parts[1])...)
	whole = norm(whole)
	for _, m := range []struct{ measurement, field string }{
		{"http_req_duration_bucket", "count"},
		{"http_req_duration_cdf", "below"},
		{"http_req_duration_cdf", "below_lo"},
		{"http_req_duration_cdf", "count"},
		{"http_reqs", "sum"},
		{"http_req_duration", "count"},
	} {
		want, got := sumBy(whole, m.measurement, m.field), sumBy(both, m.measurement, m.field)
		require.NotEmpty(t, want, m.measurement)
		assert.Equal(t, want, got, "%s %s summed over instance_id", m.measurement, m.field)
	}
	// a row's bounds, narrowed to each instance's min and max, merge to the whole test's
	bounds := func(pts []parsedPoint) map[string][2]float64 {
		out := map[string][2]float64{}
		for _, p := range find(pts, "http_req_duration_cdf", aggRun, nil) {
			b, ok := out[p.tags["le"]]
			if !ok {
				b = [2]float64{math.Inf(1), math.Inf(-1)}
			}
			out[p.tags["le"]] = [2]float64{min(b[0], p.fields["lo"]), max(b[1], p.fields["hi"])}
		}
		return out
	}
	assert.Equal(t, bounds(whole), bounds(both))
	// 3 windows of buckets and one run's; every cdf row of every instance is written
	rows := histogramRows()
	assert.Len(t, find(whole, "http_req_duration_cdf", aggRun, nil), rows)
	assert.Len(t, find(parts[0], "http_req_duration_cdf", aggRun, nil), rows)
	assert.Len(t, find(parts[1], "http_req_duration_cdf", aggRun, nil), rows)
	share := 0.0
	for _, pts := range parts {
		share += find(pts, "http_reqs", aggRun, nil)[0].fields["share"]
	}
	assert.InDelta(t, 1, share, 1e-12)
	assert.InDelta(t, 1, find(whole, "http_reqs", aggRun, nil)[0].fields["share"], 0)

	// the quantile a dashboard reads from the summed cdf rows is within a row's width of the
	// union's exact one (k6's), and the same figure as from the whole test's rows
	slices.Sort(values)
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
		got, wantWhole := cdfQuantile(both, q), cdfQuantile(whole, q)
		assert.Equal(t, wantWhole, got, "p%v", q*100)
		exact := exactQuantile(values, q)
		assert.True(t, got >= values[0] && got <= values[len(values)-1], "p%v %v outside [min, max]", q*100, got)
		assert.InEpsilon(t, exact, got, 1.0/(1<<cdfSubBits), "p%v: %v, exact %v", q*100, got, exact)
	}
}

// histogramRows is the number of cdf rows per series: the grid, a row below and one above.
func histogramRows() int {
	return int(math.Round((math.Log2(cdfTop)-math.Log2(cdfFloor))*(1<<cdfSubBits))) + 2
}

// cdfQuantile is what the dashboards' InfluxQL computes: sums per le over instances, the row
// where below_lo < q·count ≤ below, linear inside its merged bounds (min lo, max hi).
func cdfQuantile(pts []parsedPoint, q float64) float64 {
	type row struct{ b0, b1, n, lo, hi float64 }
	rows := map[string]*row{}
	for _, p := range pts {
		if p.measurement != "http_req_duration_cdf" {
			continue
		}
		r := rows[p.tags["le"]]
		if r == nil {
			r = &row{lo: math.Inf(1), hi: math.Inf(-1)}
			rows[p.tags["le"]] = r
		}
		r.lo, r.hi = min(r.lo, p.fields["lo"]), max(r.hi, p.fields["hi"])
		r.b0 += p.fields["below_lo"]
		r.b1 += p.fields["below"]
		r.n += p.fields["count"]
	}
	for _, r := range rows {
		if r.b0 < q*r.n && r.b1 >= q*r.n {
			return r.lo + (r.hi-r.lo)*(q*r.n-r.b0)/(r.b1-r.b0)
		}
	}
	return math.NaN()
}

func exactQuantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := math.Floor(pos)
	a := sorted[int(lo)]
	if int(lo)+1 >= len(sorted) {
		return a
	}
	return a + (pos-lo)*(sorted[int(lo)+1]-a)
}

// K6_INFLUXDB_HISTOGRAMS picks the trends with bucket points; * is every trend.
func TestHistogramsOption(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg  string
		want []string
	}{
		{"", []string{"http_req_duration_bucket", "http_req_sending_bucket"}}, // every trend
		{"?histograms=http_req_duration", []string{"http_req_duration_bucket"}},
		{"?histograms=ws_echo", nil},
		{"?histograms=*", []string{"http_req_duration_bucket", "http_req_sending_bucket"}},
		{"env:http_req_sending", []string{"http_req_sending_bucket"}},
	} {
		env := map[string]string{}
		if v, ok := strings.CutPrefix(tc.arg, "env:"); ok {
			env["K6_INFLUXDB_HISTOGRAMS"], tc.arg = v, ""
		}
		logger, _ := test.NewNullLogger()
		o, err := newOutput(output.Params{Logger: logger, Environment: env, ConfigArgument: "http://127.0.0.1:1/k6" + tc.arg})
		require.NoError(t, err)
		s := newSampler()
		at := time.Unix(1_700_000_000, 0)
		tags := s.tags("testid", "t")
		o.agg.Add([]metrics.SampleContainer{metrics.Samples{
			sample(s.metric("http_req_duration", metrics.Trend), tags, at, 3),
			sample(s.metric("http_req_sending", metrics.Trend), tags, at, 3),
		}})
		e := &encoder{}
		o.agg.encodeWindows(o.agg.closeWindows(at, true), e)
		var got []string
		for _, p := range parseLines(t, e.buf) {
			if p.tags["le"] != "" && !slices.Contains(got, p.measurement) {
				got = append(got, p.measurement)
			}
		}
		slices.Sort(got)
		assert.Equal(t, tc.want, got, tc.arg)
	}
}
