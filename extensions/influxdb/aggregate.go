package influxdb

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"go.k6.io/k6/v2/metrics"

	"github.com/proxybench/proxybench/extensions/histogram"
)

// Aggregated points: one per push interval ("window"), per metric and per set of kept tags,
// tagged agg=interval; and at the end of the test one per metric and tag set for the whole run,
// tagged agg=run (whole-run percentiles can't be rebuilt from per-window ones). Fields by metric
// type:
//
//	counter  count, sum, per_s (sum per second of the window; of the run: sum over the span of its
//	         k6 scenario, first → last request sample tagged with it (any sample without
//	         requests), so that the series of one scenario, split by status, add up to its rate)
//	gauge    value (the last), min, max, count
//	rate     count, sum (the non-zero samples), rate (sum/count)
//	trend    count, sum, min, max, mean, p50, p90, p95, p99, p999
//
// Whole-run points also carry share, the part of the test this k6 ran (its execution segment's
// length; 1 unless the test is split), so that a dashboard can count runs as sum(share) over
// instances. Trends of K6_INFLUXDB_HISTOGRAMS also get bucket and cdf points (histpoints.go).
//
// A window [start, start+interval) is aligned on the Unix epoch and timestamped with its start.
// It is written once its end is more than lateness ago; a sample that arrives after its window
// was written (k6 hands samples over every 50 ms, later when the machine is saturated) is
// counted in the oldest window still open instead, so no sample is lost and no point is ever
// written twice (InfluxDB would keep only the last of two points with the same series and time).
const (
	aggInterval = "interval"
	aggRun      = "run"
	lateness    = 500 * time.Millisecond
)

// quantiles are the trend fields and the quantile each one estimates.
var quantiles = []struct {
	field string
	q     float64
}{{"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999}}

// seriesKey is one metric with one set of kept tags (an index into aggregator.tagSets).
type seriesKey struct {
	metric *metrics.Metric
	tags   int32
}

// series accumulates the samples of one seriesKey in one window (or the whole run).
type series struct {
	count          uint64
	sum            float64 // counter: total; rate: non-zero samples; gauge: unused
	min, max, last float64 // gauge
	lastTime       int64   // gauge: time of last; all: latest sample time
	firstTime      int64   // earliest sample time
	hist           *histogram.Histogram
}

func (s *series) add(t metrics.MetricType, v float64, ts int64) {
	if s.count == 0 || ts < s.firstTime {
		s.firstTime = ts
	}
	switch t {
	case metrics.Counter:
		s.sum += v
	case metrics.Rate:
		if v != 0 {
			s.sum++
		}
	case metrics.Gauge:
		if s.count == 0 || v < s.min {
			s.min = v
		}
		if s.count == 0 || v > s.max {
			s.max = v
		}
		if s.count == 0 || ts >= s.lastTime {
			s.last = v
		}
	case metrics.Trend:
		if s.hist == nil {
			s.hist = &histogram.Histogram{}
		}
		s.hist.Add(v)
	}
	if ts > s.lastTime {
		s.lastTime = ts
	}
	s.count++
}

func (s *series) merge(t metrics.MetricType, o *series) {
	if o.count == 0 {
		return
	}
	if s.count == 0 || o.firstTime < s.firstTime {
		s.firstTime = o.firstTime
	}
	switch t {
	case metrics.Counter, metrics.Rate:
		s.sum += o.sum
	case metrics.Gauge:
		if s.count == 0 || o.min < s.min {
			s.min = o.min
		}
		if s.count == 0 || o.max > s.max {
			s.max = o.max
		}
		if s.count == 0 || o.lastTime >= s.lastTime {
			s.last = o.last
		}
	case metrics.Trend:
		if s.hist == nil {
			s.hist = &histogram.Histogram{}
		}
		s.hist.Merge(o.hist)
	}
	if o.lastTime > s.lastTime {
		s.lastTime = o.lastTime
	}
	s.count += o.count
}

// fields are the point's fields; window is the series' duration for per_s (0: none).
func (s *series) fields(t metrics.MetricType, window time.Duration, buf []field) []field {
	buf = buf[:0]
	switch t {
	case metrics.Counter:
		buf = append(buf, field{key: "count", value: float64(s.count)}, field{key: "sum", value: s.sum})
		if window > 0 {
			buf = append(buf, field{key: "per_s", value: s.sum / window.Seconds()})
		}
	case metrics.Gauge:
		buf = append(buf, field{key: "value", value: s.last}, field{key: "min", value: s.min},
			field{key: "max", value: s.max}, field{key: "count", value: float64(s.count)})
	case metrics.Rate:
		buf = append(buf, field{key: "count", value: float64(s.count)}, field{key: "sum", value: s.sum},
			field{key: "rate", value: s.sum / float64(s.count)})
	case metrics.Trend:
		h := s.hist
		buf = append(buf, field{key: "count", value: float64(h.Count())}, field{key: "sum", value: h.Sum()},
			field{key: "min", value: h.Min()}, field{key: "max", value: h.Max()}, field{key: "mean", value: h.Mean()})
		for _, q := range quantiles {
			buf = append(buf, field{key: q.field, value: h.Quantile(q.q)})
		}
	}
	return buf
}

type window struct {
	start  int64
	series map[seriesKey]*series
	// backfill: the parts of spread bytes (iospread.go) for a window already written
	backfill bool
}

// aggregator turns samples into aggregated points. add is the hot path (k6's output manager
// goroutine, every 50 ms); closing windows and encoding happen in the flusher's goroutine.
type aggregator struct {
	interval int64 // ns
	keep     []string
	instance instance
	hists    histogramSet

	mu         sync.Mutex
	tagIDs     map[*metrics.TagSet]int32 // TagSets are interned by k6: one pointer per distinct set
	tagIndex   map[string]int32
	tagSets    []string // ",k=v,…" escaped, sorted by key
	scenarios  []string // the scenario tag of each tag set ("" when it has none)
	windows    map[int64]*window
	cur        *window
	closedUpTo int64 // every window starting before this was written
	late       uint64
	pendingIO  []pendingIO       // iospread.go
	backfill   map[int64]*window // by start: parts for windows already written

	// flusher goroutine only
	run       map[seriesKey]*series
	ioWritten map[int64]map[seriesKey]*series // data_sent/_received as written, by window start
}

func newAggregator(interval time.Duration, keep []string, in instance, hists histogramSet) *aggregator {
	// instance_id is kept whatever the list says: split instances' points would overwrite
	// each other without it
	keep = append(slices.Clone(keep), InstanceTag)
	slices.Sort(keep)
	keep = slices.Compact(keep)
	return &aggregator{
		interval:  int64(interval),
		keep:      keep,
		instance:  in,
		hists:     hists,
		tagIDs:    map[*metrics.TagSet]int32{},
		tagIndex:  map[string]int32{},
		windows:   map[int64]*window{},
		backfill:  map[int64]*window{},
		run:       map[seriesKey]*series{},
		ioWritten: map[int64]map[seriesKey]*series{},
	}
}

// tagID reduces a sample's tags to the kept ones; the caller holds mu.
func (a *aggregator) tagID(ts *metrics.TagSet) int32 {
	if id, ok := a.tagIDs[ts]; ok {
		return id
	}
	pairs := make([][2]string, 0, len(a.keep))
	for _, k := range a.keep {
		v, ok := "", false
		if ts != nil {
			v, ok = ts.Get(k)
		}
		if !ok && k == InstanceTag {
			// an instance_id the samples carry (the k6-operator's --tag instance_id=N) wins:
			// it is what the runner's pod is called
			v, ok = a.instance.id, a.instance.id != ""
		}
		if ok {
			pairs = append(pairs, [2]string{k, v})
		}
	}
	enc := string(appendTags(nil, pairs))
	id, ok := a.tagIndex[enc]
	if !ok {
		id = int32(len(a.tagSets))
		a.tagSets = append(a.tagSets, enc)
		scenario := ""
		for _, kv := range pairs {
			if kv[0] == "scenario" {
				scenario = kv[1]
			}
		}
		a.scenarios = append(a.scenarios, scenario)
		a.tagIndex[enc] = id
	}
	a.tagIDs[ts] = id
	return id
}

// Add aggregates samples; it never blocks for longer than a map update per sample.
func (a *aggregator) Add(containers []metrics.SampleContainer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range containers {
		samples := c.GetSamples()
		if isIOContainer(samples) {
			a.pendingIO = append(a.pendingIO, pendingIO{samples: samples})
			continue
		}
		for i := range samples {
			s := &samples[i]
			if len(a.pendingIO) > 0 && s.Metric.Name == metrics.IterationDurationName {
				a.matchIteration(s)
			}
			a.addLocked(s.Metric, s.Tags, s.Time.UnixNano(), s.Value)
		}
	}
	a.releaseIO(false)
}

func (a *aggregator) addLocked(m *metrics.Metric, tags *metrics.TagSet, ts int64, v float64) {
	start := ts - ts%a.interval
	if ts < 0 && ts%a.interval != 0 {
		start -= a.interval
	}
	if start < a.closedUpTo {
		start = a.closedUpTo
		a.late++
	}
	w := a.cur
	if w == nil || w.start != start {
		w = a.windows[start]
		if w == nil {
			w = &window{start: start, series: map[seriesKey]*series{}}
			a.windows[start] = w
		}
		a.cur = w
	}
	k := seriesKey{metric: m, tags: a.tagID(tags)}
	s := w.series[k]
	if s == nil {
		s = &series{}
		w.series[k] = s
	}
	s.add(m.Type, v, ts)
}

// closeWindows detaches the windows whose end is more than lateness before now (all of them
// when final) in time order; later samples of them go to the oldest open window.
func (a *aggregator) closeWindows(now time.Time, final bool) []*window {
	a.mu.Lock()
	defer a.mu.Unlock()
	if final {
		a.releaseIO(true)
	}
	limit := int64(math.MaxInt64)
	if !final {
		edge := now.Add(-lateness).UnixNano()
		limit = edge - edge%a.interval // windows starting before this have ended by edge
	}
	var closed []*window
	for start, w := range a.windows {
		if start < limit {
			closed = append(closed, w)
			delete(a.windows, start)
		}
	}
	for start, w := range a.backfill {
		closed = append(closed, w)
		delete(a.backfill, start)
	}
	slices.SortFunc(closed, func(x, y *window) int { return cmp.Compare(x.start, y.start) })
	if a.cur != nil && a.cur.start < limit {
		a.cur = nil
	}
	if !final && limit > a.closedUpTo {
		a.closedUpTo = limit
	}
	return closed
}

// lateSamples is how many samples arrived after their window was written.
func (a *aggregator) lateSamples() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.late
}

// encoder appends points as line protocol, counting them.
type encoder struct {
	buf    []byte
	points int
	fields []field
	prefix []byte
}

// point appends a series' point; share > 0 adds the share field (whole-run points).
func (e *encoder) point(name, agg, tags string, s *series, t metrics.MetricType, window time.Duration, ts int64,
	share float64,
) {
	e.prefix = append(e.prefix[:0], measurementEscaper.Replace(name)...)
	e.prefix = append(e.prefix, ",agg="...)
	e.prefix = append(e.prefix, agg...)
	e.prefix = append(e.prefix, tags...)
	e.fields = s.fields(t, window, e.fields)
	if share > 0 {
		e.fields = append(e.fields, field{key: "share", value: share})
	}
	var ok bool
	if e.buf, ok = appendPoint(e.buf, e.prefix, e.fields, ts); ok {
		e.points++
	}
}

// encodeWindows writes the closed windows' points and adds them to the whole-run series.
func (a *aggregator) encodeWindows(closed []*window, e *encoder) {
	a.mu.Lock()
	tagSets := a.tagSets[:len(a.tagSets):len(a.tagSets)] // append-only: safe to read unlocked
	a.mu.Unlock()
	iv := time.Duration(a.interval)
	for _, w := range closed {
		for _, k := range sortedKeys(w.series, tagSets) {
			s := w.series[k]
			if w.backfill {
				// the window was written: again, with what it held and this part
				all := &series{}
				if old := a.ioWritten[w.start][k]; old != nil {
					all.merge(k.metric.Type, old)
				}
				all.merge(k.metric.Type, s)
				e.point(k.metric.Name, aggInterval, tagSets[k.tags], all, k.metric.Type, iv, w.start, 0)
				a.rememberWritten(w.start, k, all)
			} else {
				e.point(k.metric.Name, aggInterval, tagSets[k.tags], s, k.metric.Type, iv, w.start, 0)
				if isIOMetric(k.metric) {
					a.rememberWritten(w.start, k, s)
				}
			}
			if k.metric.Type == metrics.Trend && a.hists.has(k.metric.Name) {
				e.buckets(k.metric.Name, aggInterval, tagSets[k.tags], s.hist, w.start)
			}
			r := a.run[k]
			if r == nil {
				r = &series{}
				a.run[k] = r
			}
			r.merge(k.metric.Type, s)
		}
	}
	a.mu.Lock()
	upTo := a.closedUpTo
	a.mu.Unlock()
	a.pruneWritten(upTo)
}

// encodeRun writes one whole-run point per series, all timestamped with the run's last sample:
// one time per k6 run, so that the runs of one testid stay apart (GROUP BY time) and each
// run's series group together.
func (a *aggregator) encodeRun(e *encoder) {
	a.mu.Lock()
	tagSets := a.tagSets[:len(a.tagSets):len(a.tagSets)]
	scenarios := a.scenarios[:len(a.scenarios):len(a.scenarios)]
	a.mu.Unlock()
	type span struct{ first, last int64 }
	spans := map[string]span{} // by scenario tag value
	// A scenario's span is that of its requests when it has any: the samples k6 sends when an
	// iteration ends (iteration_duration, data_sent/_received) come after the last request, by
	// seconds on a saturated machine when the iteration is the whole scenario (our native loop),
	// and would lower its rate; a scenario without requests (WebSocket) spans all its samples.
	hasReqs := map[string]bool{}
	for k := range a.run {
		if isRequestMetric(k.metric) {
			hasReqs[scenarios[k.tags]] = true
		}
	}
	var end int64
	for k, s := range a.run {
		end = max(end, s.lastTime)
		sc := scenarios[k.tags]
		if hasReqs[sc] && !isRequestMetric(k.metric) {
			continue
		}
		sp, ok := spans[sc]
		if !ok {
			sp = span{s.firstTime, s.lastTime}
		}
		sp.first, sp.last = min(sp.first, s.firstTime), max(sp.last, s.lastTime)
		spans[sc] = sp
	}
	for _, k := range sortedKeys(a.run, tagSets) {
		sp := spans[scenarios[k.tags]]
		s := a.run[k]
		e.point(k.metric.Name, aggRun, tagSets[k.tags], s, k.metric.Type, time.Duration(sp.last-sp.first), end,
			a.instance.share)
		if k.metric.Type == metrics.Trend && a.hists.has(k.metric.Name) {
			e.buckets(k.metric.Name, aggRun, tagSets[k.tags], s.hist, end)
			e.cdf(k.metric.Name, tagSets[k.tags], s.hist, end)
		}
	}
}

// isRequestMetric: k6's metrics of each HTTP request (http_reqs, http_req_duration, …_failed, …).
func isRequestMetric(m *metrics.Metric) bool { return strings.HasPrefix(m.Name, "http_req") }

// sortedKeys orders series by metric name and tags, so that output is deterministic.
func sortedKeys(m map[seriesKey]*series, tagSets []string) []seriesKey {
	keys := make([]seriesKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y seriesKey) int {
		if c := cmp.Compare(x.metric.Name, y.metric.Name); c != 0 {
			return c
		}
		return cmp.Compare(tagSets[x.tags], tagSets[y.tags])
	})
	return keys
}
