package influxdb

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/metrics"

	"github.com/proxybench/proxybench/extensions/histogram"
)

// parsedPoint is one line of line protocol, parsed back for assertions (no escapes needed here).
type parsedPoint struct {
	measurement string
	tags        map[string]string
	fields      map[string]float64
	ts          int64
}

func parseLines(t *testing.T, buf []byte) []parsedPoint {
	t.Helper()
	var out []parsedPoint
	for line := range strings.SplitSeq(strings.TrimSpace(string(buf)), "\n") {
		if line == "" {
			continue
		}
		parts := strings.Split(line, " ")
		require.Len(t, parts, 3, line)
		head := strings.Split(parts[0], ",")
		p := parsedPoint{measurement: head[0], tags: map[string]string{}, fields: map[string]float64{}}
		for _, kv := range head[1:] {
			k, v, _ := strings.Cut(kv, "=")
			p.tags[k] = v
		}
		for kv := range strings.SplitSeq(parts[1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			p.fields[k] = f
		}
		ts, err := strconv.ParseInt(parts[2], 10, 64)
		require.NoError(t, err)
		p.ts = ts
		out = append(out, p)
	}
	return out
}

func find(points []parsedPoint, measurement, agg string, tags map[string]string) []parsedPoint {
	var out []parsedPoint
next:
	for _, p := range points {
		if p.measurement != measurement || p.tags["agg"] != agg {
			continue
		}
		for k, v := range tags {
			if p.tags[k] != v {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

// Known inputs in known windows give exact counts, sums, rates, gauges and trend statistics;
// only the kept tags survive, and every window is timestamped with its aligned start.
func TestAggregateKnownInputs(t *testing.T) {
	t.Parallel()
	s := newSampler()
	reqs := s.metric("http_reqs", metrics.Counter)
	dur := s.metric("http_req_duration", metrics.Trend)
	failed := s.metric("http_req_failed", metrics.Rate)
	vus := s.metric("vus", metrics.Gauge)
	ok := s.tags("testid", "t1", "target", "nginx", "status", "200", "url", "http://x/?a=1", "method", "GET")
	ok2 := s.tags("testid", "t1", "target", "nginx", "status", "200", "url", "http://x/?a=2", "method", "GET")
	bad := s.tags("testid", "t1", "target", "nginx", "status", "502")
	base := time.Unix(1_700_000_000, 0)

	a := newAggregator(time.Second, DefaultAggregateTags, instance{share: 1}, newHistogramSet(DefaultHistograms))
	var c metrics.Samples
	// window 0: 100 ok requests of 1..100 ms (two URLs fold into one series), 4 failed of 500 ms
	for i := 1; i <= 100; i++ {
		tags := ok
		if i%2 == 0 {
			tags = ok2
		}
		at := base.Add(time.Duration(i) * time.Millisecond)
		c = append(c, sample(reqs, tags, at, 1), sample(dur, tags, at, float64(i)), sample(failed, tags, at, 0))
	}
	for i := range 4 {
		at := base.Add(time.Duration(500+i) * time.Millisecond)
		c = append(c, sample(reqs, bad, at, 1), sample(dur, bad, at, 500), sample(failed, bad, at, 1))
	}
	c = append(c, sample(vus, s.tags("testid", "t1"), base.Add(100*time.Millisecond), 10),
		sample(vus, s.tags("testid", "t1"), base.Add(900*time.Millisecond), 7),
		sample(vus, s.tags("testid", "t1"), base.Add(500*time.Millisecond), 12))
	// window 1: 3 more ok requests
	for i := range 3 {
		at := base.Add(time.Second + time.Duration(i)*time.Millisecond)
		c = append(c, sample(reqs, ok, at, 1), sample(dur, ok, at, 2))
	}
	a.Add([]metrics.SampleContainer{c})

	e := &encoder{}
	a.encodeWindows(a.closeWindows(base.Add(10*time.Second), false), e)
	a.encodeRun(e)
	pts := parseLines(t, e.buf)
	require.Equal(t, e.points, len(pts))

	w0 := base.UnixNano()
	okReqs := find(pts, "http_reqs", aggInterval, map[string]string{"status": "200"})
	require.Len(t, okReqs, 2, "one point per window")
	assert.Equal(t, w0, okReqs[0].ts, "window start")
	assert.Equal(t, w0+int64(time.Second), okReqs[1].ts)
	assert.Equal(t, map[string]string{"agg": "interval", "testid": "t1", "target": "nginx", "status": "200"},
		okReqs[0].tags, "url and method are folded away")
	assert.Equal(t, map[string]float64{"count": 100, "sum": 100, "per_s": 100}, okReqs[0].fields)
	assert.Equal(t, 3.0, okReqs[1].fields["sum"])

	d := find(pts, "http_req_duration", aggInterval, map[string]string{"status": "200"})[0].fields
	assert.Equal(t, 100.0, d["count"])
	assert.Equal(t, 5050.0, d["sum"])
	assert.Equal(t, 1.0, d["min"])
	assert.Equal(t, 100.0, d["max"])
	assert.Equal(t, 50.5, d["mean"])
	for f, want := range map[string]float64{"p50": 50.5, "p90": 90.1, "p95": 95.05, "p99": 99.01, "p999": 99.901} {
		assert.InDelta(t, want, d[f], histogram.RelErr*want, f)
	}
	d502 := find(pts, "http_req_duration", aggInterval, map[string]string{"status": "502"})[0].fields
	assert.Equal(t, map[string]float64{
		"count": 4, "sum": 2000, "min": 500, "max": 500, "mean": 500,
		"p50": 500, "p90": 500, "p95": 500, "p99": 500, "p999": 500,
	}, d502)

	f502 := find(pts, "http_req_failed", aggInterval, map[string]string{"status": "502"})[0].fields
	assert.Equal(t, map[string]float64{"count": 4, "sum": 4, "rate": 1}, f502)
	f200 := find(pts, "http_req_failed", aggInterval, map[string]string{"status": "200"})[0].fields
	assert.Equal(t, map[string]float64{"count": 100, "sum": 0, "rate": 0}, f200)

	g := find(pts, "vus", aggInterval, nil)[0].fields
	assert.Equal(t, map[string]float64{"value": 7, "min": 7, "max": 12, "count": 3}, g, "value is the latest by time")

	// whole run: windows merged, timestamped with the last sample
	runReqs := find(pts, "http_reqs", aggRun, map[string]string{"status": "200"})
	require.Len(t, runReqs, 1)
	assert.Equal(t, 103.0, runReqs[0].fields["sum"])
	assert.Equal(t, base.Add(time.Second+2*time.Millisecond).UnixNano(), runReqs[0].ts)
	// every series' rate is over the run's span (1 ms → 1002 ms), the 502s' too, not their own
	// 3 ms: the statuses of one scenario add up to its rate; and one time for the whole run
	run502 := find(pts, "http_reqs", aggRun, map[string]string{"status": "502"})
	require.Len(t, run502, 1)
	assert.InDelta(t, 103/1.001, runReqs[0].fields["per_s"], 1e-9)
	assert.InDelta(t, 4/1.001, run502[0].fields["per_s"], 1e-9)
	assert.Equal(t, runReqs[0].ts, run502[0].ts)
	runDur := find(pts, "http_req_duration", aggRun, map[string]string{"status": "200"})[0].fields
	assert.Equal(t, 103.0, runDur["count"])
	assert.Equal(t, 5056.0, runDur["sum"])
	assert.Equal(t, 1.0, runDur["min"])
}

// Windows close only once their end is lateness behind; a sample that comes after its window
// was written is counted in the oldest open window, never in a second point of the old one.
func TestAggregateLateSamples(t *testing.T) {
	t.Parallel()
	s := newSampler()
	reqs := s.metric("http_reqs", metrics.Counter)
	tags := s.tags("target", "direct")
	base := time.Unix(1_700_000_100, 0)
	a := newAggregator(time.Second, DefaultAggregateTags, instance{share: 1}, newHistogramSet(DefaultHistograms))
	add := func(at time.Time) {
		a.Add([]metrics.SampleContainer{metrics.Samples{sample(reqs, tags, at, 1)}})
	}

	add(base.Add(100 * time.Millisecond))
	add(base.Add(1100 * time.Millisecond))
	assert.Empty(t, a.closeWindows(base.Add(1400*time.Millisecond), false), "window 0 ended less than lateness ago")
	closed := a.closeWindows(base.Add(1600*time.Millisecond), false)
	require.Len(t, closed, 1)
	assert.Equal(t, base.UnixNano(), closed[0].start)

	add(base.Add(900 * time.Millisecond)) // late: window 0 is written
	closed = a.closeWindows(base.Add(10*time.Second), true)
	require.Len(t, closed, 1)
	assert.Equal(t, base.Add(time.Second).UnixNano(), closed[0].start)
	for _, sr := range closed[0].series {
		assert.Equal(t, 2.0, sr.sum, "the late sample counts in window 1")
	}
	assert.Equal(t, uint64(1), a.lateSamples())
}

// With K6_INFLUXDB_PUSH_INTERVAL=5s windows are aligned on multiples of 5 s since the epoch.
func TestAggregateWindowAlignment(t *testing.T) {
	t.Parallel()
	s := newSampler()
	reqs := s.metric("http_reqs", metrics.Counter)
	a := newAggregator(5*time.Second, []string{"target"}, instance{share: 1}, newHistogramSet(DefaultHistograms))
	at := time.Unix(1_700_000_003, 700)
	a.Add([]metrics.SampleContainer{metrics.Samples{sample(reqs, s.tags("target", "x"), at, 2)}})
	closed := a.closeWindows(at.Add(time.Minute), false)
	require.Len(t, closed, 1)
	assert.Equal(t, time.Unix(1_700_000_000, 0).UnixNano(), closed[0].start)
	e := &encoder{}
	a.encodeWindows(closed, e)
	assert.Equal(t, "http_reqs,agg=interval,target=x count=1,sum=2,per_s=0.4 1700000000000000000\n", string(e.buf))
}

func BenchmarkAggregateAdd(b *testing.B) {
	s := newSampler()
	reqs := s.metric("http_reqs", metrics.Counter)
	dur := s.metric("http_req_duration", metrics.Trend)
	tags := s.tags("testid", "b", "target", "direct", "scenario", "reused-h1c", "status", "200", "url", "http://x/")
	a := newAggregator(time.Second, DefaultAggregateTags, instance{share: 1}, newHistogramSet(DefaultHistograms))
	now := time.Now()
	c := metrics.Samples{sample(reqs, tags, now, 1), sample(dur, tags, now, 1.5)}
	batch := []metrics.SampleContainer{c}
	b.ResetTimer()
	for range b.N {
		a.Add(batch)
	}
}

// A counter's whole-run rate is over its own scenario's span: a warm-up before the measured
// scenario does not stretch the measured one's, and the statuses of one scenario add up.
func TestAggregateRunRatePerScenario(t *testing.T) {
	t.Parallel()
	s := newSampler()
	reqs := s.metric("http_reqs", metrics.Counter)
	warm := s.tags("scenario", "warmup", "status", "200")
	ok := s.tags("scenario", "reused-h1c", "status", "200")
	bad := s.tags("scenario", "reused-h1c", "status", "502")
	base := time.Unix(1_700_000_000, 0)
	var c metrics.Samples
	for i := range 20 { // warm-up: 0 → 1.9 s
		c = append(c, sample(reqs, warm, base.Add(time.Duration(i)*100*time.Millisecond), 1))
	}
	for i := range 41 { // measured: 2 s → 6 s, 40 ok and one 502 at 3 s
		at := base.Add(2*time.Second + time.Duration(i)*100*time.Millisecond)
		tags := ok
		if i == 10 {
			tags = bad
		}
		c = append(c, sample(reqs, tags, at, 1))
	}
	// the iteration's end, late (a saturated machine): not the end of the scenario's requests
	iter := s.metric(metrics.IterationDurationName, metrics.Trend)
	c = append(c, sample(iter, ok, base.Add(8*time.Second), 6000))
	a := newAggregator(time.Second, DefaultAggregateTags, instance{share: 1}, newHistogramSet(DefaultHistograms))
	a.Add([]metrics.SampleContainer{c})
	e := &encoder{}
	a.encodeWindows(a.closeWindows(base.Add(time.Minute), true), e)
	a.encodeRun(e)
	pts := parseLines(t, e.buf)
	rate := func(tags map[string]string) float64 {
		p := find(pts, "http_reqs", aggRun, tags)
		require.Len(t, p, 1, "%v", tags)
		assert.Equal(t, base.Add(8*time.Second).UnixNano(), p[0].ts, "one time for the whole run: its last sample's")
		return p[0].fields["per_s"]
	}
	assert.InDelta(t, 20/1.9, rate(map[string]string{"scenario": "warmup"}), 1e-9)
	okRate, badRate := rate(map[string]string{"scenario": "reused-h1c", "status": "200"}), rate(map[string]string{"scenario": "reused-h1c", "status": "502"})
	assert.InDelta(t, 40/4.0, okRate, 1e-9)
	assert.InDelta(t, 1/4.0, badRate, 1e-9, "over the scenario's 4 s, not the 502s' own instant")
	assert.InDelta(t, 41/4.0, okRate+badRate, 1e-9)
}

// An iteration's bytes, handed over once at its end (k6's IOSamples, then iteration_duration
// of the same tags and time), are spread over the iteration's windows, those already written
// included (written again with their part added), and add up to the whole: a 1-second window
// shows its own second's bytes. An IO container no iteration_duration follows stays where it is.
func TestAggregateSpreadsIterationBytes(t *testing.T) {
	t.Parallel()
	s := newSampler()
	sent := s.metric(metrics.DataSentName, metrics.Counter)
	recv := s.metric(metrics.DataReceivedName, metrics.Counter)
	iter := s.metric(metrics.IterationDurationName, metrics.Trend)
	reqs := s.metric("http_reqs", metrics.Counter)
	tags := s.tags("target", "direct")
	base := time.Unix(1_700_000_000, 0)
	a := newAggregator(time.Second, DefaultAggregateTags, instance{share: 1}, newHistogramSet(DefaultHistograms))
	var lines []byte
	flush := func(now time.Time, final bool) {
		e := &encoder{}
		a.encodeWindows(a.closeWindows(now, final), e)
		if final {
			a.encodeRun(e)
		}
		lines = append(lines, e.buf...)
	}
	// requests every second for 4 s (windows 0-3 are written meanwhile), then the iteration ends
	for i := range 4 {
		at := base.Add(time.Duration(i)*time.Second + 500*time.Millisecond)
		a.Add([]metrics.SampleContainer{metrics.Samples{sample(reqs, tags, at, 1)}})
		if i == 1 { // another VU's short iteration: window 1 is written with its 5 bytes first
			a.Add([]metrics.SampleContainer{
				metrics.Samples{sample(sent, tags, at, 1), sample(recv, tags, at, 5)},
				metrics.Samples{sample(iter, tags, at, 200)},
			})
		}
		flush(base.Add(time.Duration(i+1)*time.Second+600*time.Millisecond), false)
	}
	end := base.Add(4 * time.Second)
	a.Add([]metrics.SampleContainer{
		metrics.Samples{sample(sent, tags, end, 400), sample(recv, tags, end, 4000)},
		metrics.Samples{sample(iter, tags, end, 4000)}, // ms: the iteration began at base
	})
	// a cut-short iteration: bytes without iteration_duration, kept at their time
	a.Add([]metrics.SampleContainer{metrics.Samples{sample(sent, tags, end.Add(200*time.Millisecond), 7), sample(recv, tags, end.Add(200*time.Millisecond), 70)}})
	a.Add(nil)
	flush(end.Add(time.Minute), true)

	points := parseLines(t, lines)
	perWindow := map[int64]float64{} // the last point of each window wins, as in InfluxDB
	for _, p := range find(points, metrics.DataReceivedName, aggInterval, nil) {
		perWindow[p.ts] = p.fields["sum"]
	}
	for i, want := range []float64{1000, 1005, 1000, 1000} {
		assert.InDelta(t, want, perWindow[base.Add(time.Duration(i)*time.Second).UnixNano()], 1e-6, "window %d", i)
	}
	assert.InDelta(t, 70, perWindow[end.UnixNano()], 1e-6, "the cut-short iteration's bytes stay in their window")
	run := find(points, metrics.DataReceivedName, aggRun, nil)
	require.Len(t, run, 1)
	assert.InDelta(t, 4075, run[0].fields["sum"], 1e-6, "the whole run keeps every byte once")
	sentRun := find(points, metrics.DataSentName, aggRun, nil)
	require.Len(t, sentRun, 1)
	assert.InDelta(t, 408, sentRun[0].fields["sum"], 1e-6)
}
