package sse

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/metrics"
)

func TestRegisterMetrics(t *testing.T) {
	t.Parallel()

	registry := metrics.NewRegistry()
	first, err := registerMetrics(registry)
	require.NoError(t, err)
	second, err := registerMetrics(registry) // the next VU
	require.NoError(t, err)
	assert.Same(t, first.FirstEvent, second.FirstEvent)

	for _, m := range []*metrics.Metric{first.FirstEvent, first.EventGap, first.FirstChunk} {
		assert.Equal(t, metrics.Trend, m.Type, m.Name)
		assert.Equal(t, metrics.Time, m.Contains, m.Name)
	}
	assert.Equal(t, metricFirstEvent, first.FirstEvent.Name)
	assert.Equal(t, metricEventGap, first.EventGap.Name)
	assert.Equal(t, metricFirstChunk, first.FirstChunk.Name)
}

func TestRegisterMetricsConflict(t *testing.T) {
	t.Parallel()

	registry := metrics.NewRegistry()
	_, err := registry.NewMetric(metricEventGap, metrics.Counter)
	require.NoError(t, err)
	_, err = registerMetrics(registry)
	require.Error(t, err)
}

func TestSamples(t *testing.T) {
	t.Parallel()

	ms := time.Millisecond
	start := time.Unix(100, 0)
	registry := metrics.NewRegistry()
	m, err := registerMetrics(registry)
	require.NoError(t, err)
	base := metrics.TagsAndMeta{Tags: registry.RootTagSet().WithTagsFromMap(map[string]string{"route": "/sse"})}

	type want struct {
		metric string
		value  float64
		at     time.Duration
	}
	tests := []struct {
		name       string
		res        *Result
		systemTags *metrics.SystemTagSet
		wantTags   map[string]string
		want       []want
	}{
		{
			name: "events: first event and gaps",
			res: &Result{mode: modeEvents, Status: 200, Proto: "HTTP/2.0", Events: []timedEvent{
				{At: 10 * ms}, {At: 30 * ms}, {At: 70 * ms},
			}},
			systemTags: &metrics.DefaultSystemTagSet,
			wantTags:   map[string]string{"route": "/sse", "status": "200", "proto": "HTTP/2.0"},
			want: []want{
				{metricFirstEvent, 10, 10 * ms},
				{metricEventGap, 20, 30 * ms},
				{metricEventGap, 40, 70 * ms},
			},
		},
		{
			name:       "chunks: first chunk; disabled system tags are left out",
			res:        &Result{mode: modeChunks, Status: 200, Proto: "HTTP/1.1", Chunks: []time.Duration{5 * ms, 9 * ms}},
			systemTags: metrics.ToSystemTagSet([]string{"status"}),
			wantTags:   map[string]string{"route": "/sse", "status": "200"},
			want:       []want{{metricFirstChunk, 5, 5 * ms}},
		},
		{
			name:       "failed request without events: nothing",
			res:        &Result{mode: modeEvents},
			systemTags: &metrics.DefaultSystemTagSet,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got := m.samples(tc.res, start, base, tc.systemTags)
			require.Len(t, got, len(tc.want))
			for i, w := range tc.want {
				assert.Equal(t, w.metric, got[i].Metric.Name)
				assert.InDelta(t, w.value, got[i].Value, 1e-9)
				assert.Equal(t, start.Add(w.at), got[i].Time)
				assert.Equal(t, tc.wantTags, got[i].Tags.Map())
			}
		})
	}
	assert.Equal(t, map[string]string{"route": "/sse"}, base.Tags.Map(), "base tags are not modified")
}
