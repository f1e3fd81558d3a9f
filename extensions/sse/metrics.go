package sse

import (
	"strconv"
	"time"

	"go.k6.io/k6/v2/metrics"
)

// Metric names. The standard http_* samples of these requests are emitted by
// k6 itself (httpext.MakeRequest), with k6's usual tags.
const (
	metricFirstEvent = "sse_first_event"
	metricEventGap   = "sse_event_gap"
	metricFirstChunk = "stream_first_chunk"
)

// instanceMetrics are the body-level trends of the module.
type instanceMetrics struct {
	FirstEvent *metrics.Metric // request start → first complete event
	EventGap   *metrics.Metric // between consecutive events
	FirstChunk *metrics.Metric // request start → first body read that returned data
}

// registerMetrics registers the module's metrics (or returns the already
// registered ones: every VU calls it with the same registry).
func registerMetrics(registry *metrics.Registry) (*instanceMetrics, error) {
	var err error
	m := &instanceMetrics{}

	if m.FirstEvent, err = registry.NewMetric(metricFirstEvent, metrics.Trend, metrics.Time); err != nil {
		return nil, err
	}
	if m.EventGap, err = registry.NewMetric(metricEventGap, metrics.Trend, metrics.Time); err != nil {
		return nil, err
	}
	if m.FirstChunk, err = registry.NewMetric(metricFirstChunk, metrics.Trend, metrics.Time); err != nil {
		return nil, err
	}
	return m, nil
}

// samples turns a result into trend samples. base holds the VU's tags and the
// call's params.tags; status and proto are added when enabled in systemTags,
// as k6 does for its own samples. Each sample is stamped with the time its
// observation was made.
func (m *instanceMetrics) samples(
	res *Result, start time.Time, base metrics.TagsAndMeta, systemTags *metrics.SystemTagSet,
) metrics.Samples {
	tm := base.Clone()
	tm.SetSystemTagOrMetaIfEnabled(systemTags, metrics.TagStatus, strconv.Itoa(res.Status))
	if res.Proto != "" {
		tm.SetSystemTagOrMetaIfEnabled(systemTags, metrics.TagProto, res.Proto)
	}

	sample := func(metric *metrics.Metric, at, value time.Duration) metrics.Sample {
		return metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: metric, Tags: tm.Tags},
			Time:       start.Add(at),
			Metadata:   tm.Metadata,
			Value:      metrics.D(value),
		}
	}

	var out metrics.Samples
	switch res.mode {
	case modeEvents:
		if first, ok := res.FirstEvent(); ok {
			out = append(out, sample(m.FirstEvent, first, first))
		}
		for i, gap := range res.Gaps() {
			out = append(out, sample(m.EventGap, res.Events[i+1].At, gap))
		}
	case modeChunks:
		if first, ok := res.FirstChunk(); ok {
			out = append(out, sample(m.FirstChunk, first, first))
		}
	}
	return out
}
