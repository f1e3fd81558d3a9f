package histout

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/ext"
	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"

	"github.com/proxybench/proxybench/extensions/histogram"
)

func TestRegister(t *testing.T) {
	t.Parallel()
	_, ok := ext.Get(ext.OutputExtension)[outputName]
	require.True(t, ok, "the output is registered as %s", outputName)
}

func TestNeedsAFile(t *testing.T) {
	t.Parallel()
	_, err := New(output.Params{})
	require.ErrorContains(t, err, "--out proxybench-histograms=<file>")
}

func TestStartFailsOnAnUnwritableFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing", "h.json")
	o, err := New(output.Params{ConfigArgument: path})
	require.NoError(t, err)
	require.ErrorContains(t, o.Start(), "write "+path)
}

// exactQuantile is k6's Trend percentile: linear interpolation between the nearest ranks.
func exactQuantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := math.Floor(pos)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[i]
	}
	return sorted[i] + (pos-lo)*(sorted[i+1]-sorted[i])
}

// Every Trend sample lands in its metric's histogram of its scenario, whatever its other tags;
// counters and samples without a scenario are left out; the file holds what k6 would say.
func TestHistogramsPerMetricAndScenario(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.json")
	o, err := New(output.Params{ConfigArgument: path})
	require.NoError(t, err)
	require.NoError(t, o.Start())

	reg := metrics.NewRegistry()
	dur := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
	reqs := reg.MustNewMetric("http_reqs", metrics.Counter)
	root := reg.RootTagSet()
	measured := root.With("scenario", "reused-h2")
	rng := rand.New(rand.NewPCG(1, 2))
	var values []float64
	var batch metrics.Samples
	now := time.Now()
	for i := range 5000 {
		// two tag sets of one scenario: the histogram holds both
		tags := measured.With("proto", "HTTP/2.0")
		if i%3 == 0 {
			tags = measured.With("status", "200")
		}
		v := 0.2 + rng.ExpFloat64()*1.5
		values = append(values, v)
		batch = append(batch,
			metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: dur, Tags: tags}, Time: now, Value: v},
			metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: reqs, Tags: tags}, Time: now, Value: 1})
	}
	batch = append(batch,
		metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: dur, Tags: root.With("scenario", "warmup")}, Time: now, Value: 9},
		metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: dur, Tags: root}, Time: now, Value: 100}) // setup()
	o.AddMetricSamples([]metrics.SampleContainer{batch})
	require.NoError(t, o.Stop())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var f File
	require.NoError(t, json.Unmarshal(data, &f))
	assert.Equal(t, Schema, f.Schema)
	keys := make([]string, 0, len(f.Histograms))
	for k := range f.Histograms {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	assert.Equal(t, []string{"http_req_duration{scenario:reused-h2}", "http_req_duration{scenario:warmup}"}, keys)

	h := f.Histograms[Key("http_req_duration", "reused-h2")]
	require.NotNil(t, h)
	assert.Equal(t, uint64(len(values)), h.Count())
	sort.Float64s(values)
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
		want := exactQuantile(values, q)
		assert.InDelta(t, want, h.Quantile(q), want*histogram.RelErr, "p%v", q*100)
	}
	assert.InDelta(t, values[0], h.Min(), 0)
	assert.InDelta(t, values[len(values)-1], h.Max(), 0)
	assert.Equal(t, uint64(1), f.Histograms[Key("http_req_duration", "warmup")].Count())
}
