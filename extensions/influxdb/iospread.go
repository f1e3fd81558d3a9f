package influxdb

import (
	"time"

	"go.k6.io/k6/v2/metrics"
)

// k6 counts an iteration's bytes on the wire (data_sent, data_received) in its dialer and hands
// them over once, when the iteration ends (js runner: Dialer.IOSamples, then iteration_duration
// with the same tags and time). Our native loop (scenarios/native) runs one iteration per
// scenario, so all its bytes used to land in the last window: a 1-second window showed seven
// times the real rate at its peak, and nothing before. The output spreads such bytes evenly over
// the iteration they were counted in, [end - iteration_duration, end]: the part of a window
// already written is written again with its share added (the window's earlier data points are
// kept for that), so every window shows the bytes of its own second, within the iteration's
// unevenness, and the whole run's totals stay exact.

// ioHistory bounds how far back an iteration's bytes are spread (and how long the written data
// windows are kept for that): an iteration longer than this puts its earlier part in the oldest
// window kept.
const ioHistory = time.Hour

// pendingIO is an iteration's data_sent/data_received container, waiting for the
// iteration_duration sample that tells when the iteration started.
type pendingIO struct {
	samples []metrics.Sample
	waited  bool // held through one Add call already
}

// isIOContainer: k6's IOSamples, data_sent and data_received of one time and tag set.
func isIOContainer(samples []metrics.Sample) bool {
	return len(samples) == 2 && samples[0].Metric.Name == metrics.DataSentName &&
		samples[1].Metric.Name == metrics.DataReceivedName && samples[0].Time.Equal(samples[1].Time) &&
		samples[0].Tags == samples[1].Tags
}

// matchIteration spreads the pending bytes of the iteration whose iteration_duration is s;
// the caller holds mu.
func (a *aggregator) matchIteration(s *metrics.Sample) {
	for i, p := range a.pendingIO {
		if p.samples[0].Tags != s.Tags || !p.samples[0].Time.Equal(s.Time) {
			continue
		}
		end := s.Time.UnixNano()
		start := end - int64(s.Value*float64(time.Millisecond)) // a Trend of milliseconds
		for j := range p.samples {
			a.spreadLocked(p.samples[j].Metric, p.samples[j].Tags, start, end, p.samples[j].Value)
		}
		a.pendingIO = append(a.pendingIO[:i], a.pendingIO[i+1:]...)
		return
	}
}

// releaseIO adds the pending bytes no iteration_duration followed (an iteration cut short
// emits none) at their own time, as before: those held through one Add already, or all when
// final. The caller holds mu.
func (a *aggregator) releaseIO(final bool) {
	kept := a.pendingIO[:0]
	for _, p := range a.pendingIO {
		if !final && !p.waited {
			p.waited = true
			kept = append(kept, p)
			continue
		}
		for j := range p.samples {
			s := &p.samples[j]
			a.addLocked(s.Metric, s.Tags, s.Time.UnixNano(), s.Value)
		}
	}
	a.pendingIO = kept
}

// spreadLocked adds counter value v evenly over [start, end]: each window gets the part of v
// its overlap is of the span (the last the remainder, so the parts add up to v exactly).
// Windows already written get their part in a backfill window, written again by
// encodeWindows with what they held. The caller holds mu.
func (a *aggregator) spreadLocked(m *metrics.Metric, tags *metrics.TagSet, start, end int64, v float64) {
	if oldest := a.closedUpTo - int64(ioHistory); start < oldest {
		start = oldest
	}
	if end-start <= 0 || v == 0 {
		a.addLocked(m, tags, end, v)
		return
	}
	k := seriesKey{metric: m, tags: a.tagID(tags)}
	rest := v
	for ws := start - mod(start, a.interval); ws <= end; ws += a.interval {
		lo, hi := max(start, ws), min(end, ws+a.interval)
		part := v * float64(hi-lo) / float64(end-start)
		if ws+a.interval > end {
			part = rest
		}
		rest -= part
		if part == 0 {
			continue
		}
		if ws >= a.closedUpTo {
			a.addLocked(m, tags, lo, part)
			continue
		}
		w := a.backfill[ws]
		if w == nil {
			w = &window{start: ws, series: map[seriesKey]*series{}, backfill: true}
			a.backfill[ws] = w
		}
		s := w.series[k]
		if s == nil {
			s = &series{}
			w.series[k] = s
		}
		s.add(metrics.Counter, part, lo)
	}
}

func mod(x, n int64) int64 {
	r := x % n
	if r < 0 {
		r += n
	}
	return r
}

// isIOMetric: the counters whose written windows are kept for backfills.
func isIOMetric(m *metrics.Metric) bool {
	return m.Name == metrics.DataSentName || m.Name == metrics.DataReceivedName
}

// rememberWritten keeps (a copy of) s as what window start wrote for k; flusher only.
func (a *aggregator) rememberWritten(start int64, k seriesKey, s *series) {
	w := a.ioWritten[start]
	if w == nil {
		w = map[seriesKey]*series{}
		a.ioWritten[start] = w
	}
	c := *s
	w[k] = &c
}

// pruneWritten forgets the written data windows older than ioHistory; flusher only.
func (a *aggregator) pruneWritten(upTo int64) {
	for start := range a.ioWritten {
		if start < upTo-int64(ioHistory)-a.interval {
			delete(a.ioWritten, start)
		}
	}
}
