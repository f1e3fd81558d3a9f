package influxdb

import (
	"testing"
	"time"

	"go.k6.io/k6/v2/metrics"
)

// requestSamples are the samples k6 emits for one checked request of reused-h1c: nine
// http_req_* samples, one check, and the iteration's data_sent, data_received, iterations and
// iteration_duration (k6 emits them per iteration, one request per iteration there).
func requestSamples(s *sampler) []metrics.SampleContainer {
	tags := s.tags("testid", "bench", "target", "direct", "mode", "reused", "scenario", "reused-h1c", "route", "/",
		"proto", "HTTP/1.1", "status", "200", "expected_response", "true", "method", "GET",
		"url", "http://bench.test:9000/", "name", "http://bench.test:9000/")
	now := time.Now()
	var http metrics.Samples
	for _, m := range []struct {
		name string
		typ  metrics.MetricType
		v    float64
	}{
		{"http_reqs", metrics.Counter, 1},
		{"http_req_duration", metrics.Trend, 0.41},
		{"http_req_blocked", metrics.Trend, 0.002},
		{"http_req_connecting", metrics.Trend, 0},
		{"http_req_tls_handshaking", metrics.Trend, 0},
		{"http_req_sending", metrics.Trend, 0.01},
		{"http_req_waiting", metrics.Trend, 0.35},
		{"http_req_receiving", metrics.Trend, 0.05},
		{"http_req_failed", metrics.Rate, 0},
	} {
		http = append(http, sample(s.metric(m.name, m.typ), tags, now, m.v))
	}
	iterTags := s.tags("testid", "bench", "target", "direct", "mode", "reused", "scenario", "reused-h1c")
	return []metrics.SampleContainer{
		metrics.ConnectedSamples{Samples: http, Tags: tags, Time: now},
		metrics.Samples{sample(s.metric("checks", metrics.Rate), tags.With("check", "200, 4096 bytes"), now, 1)},
		metrics.ConnectedSamples{Samples: []metrics.Sample{
			sample(s.metric("data_sent", metrics.Counter), iterTags, now, 80),
			sample(s.metric("data_received", metrics.Counter), iterTags, now, 4200),
			sample(s.metric("iterations", metrics.Counter), iterTags, now, 1),
			sample(s.metric("iteration_duration", metrics.Trend), iterTags, now, 0.45),
		}, Tags: iterTags, Time: now},
	}
}

// BenchmarkRequestAggregate is the CPU aggregate mode spends per request in k6's process:
// folding one request's samples into the open window (encoding a window is per interval, not
// per request).
func BenchmarkRequestAggregate(b *testing.B) {
	s := newSampler()
	batch := requestSamples(s)
	a := newAggregator(time.Second, DefaultAggregateTags, instance{share: 1}, newHistogramSet(DefaultHistograms))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		a.Add(batch)
	}
}

// BenchmarkRequestRaw is the CPU raw mode spends per request in k6's process before the
// network: buffering the samples and encoding one line per sample.
func BenchmarkRequestRaw(b *testing.B) {
	s := newSampler()
	batch := requestSamples(s)
	kinds, _ := makeFieldKinds(NewConfig().TagsAsFields)
	r := newRawEncoder(kinds, time.Nanosecond, "")
	o := &Output{}
	e := &encoder{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		o.SampleBuffer.AddMetricSamples(batch)
		if i%1000 == 999 {
			e.buf, e.points = e.buf[:0], 0
			r.encode(o.GetBufferedSamples(), e)
		}
	}
}
