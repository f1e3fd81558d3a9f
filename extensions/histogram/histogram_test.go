package histogram

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exactQuantile is k6's Trend percentile: linear interpolation between the two nearest ranks.
func exactQuantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := math.Floor(pos)
	a := sorted[int(lo)]
	if int(lo)+1 >= len(sorted) {
		return a
	}
	return a + (pos-lo)*(sorted[int(lo)+1]-a)
}

// Every quantile is within RelErr (0.2%) of k6's exact figure for the same samples, whatever
// their distribution; min, max, count and sum are exact.
func TestHistogramQuantileErrorBound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // test data
	dists := map[string]func() float64{
		"latency-like lognormal ms": func() float64 { return math.Exp(rng.NormFloat64()*0.8 - 1) },
		"uniform 0-100":             func() float64 { return rng.Float64() * 100 },
		"bimodal":                   func() float64 { return []float64{0.2, 40}[rng.IntN(2)] * (1 + rng.Float64()/10) },
		"with zeros":                func() float64 { return []float64{0, rng.Float64()}[rng.IntN(2)] },
		"wide range":                func() float64 { return math.Pow(10, rng.Float64()*12-6) },
		"negatives":                 func() float64 { return rng.NormFloat64() * 5 },
		"constant":                  func() float64 { return 4.096 },
	}
	qs := []float64{0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1}
	for name, gen := range dists {
		for _, n := range []int{1, 2, 7, 1000, 100000} {
			h := &Histogram{}
			vals := make([]float64, n)
			sum := 0.0
			for i := range vals {
				vals[i] = gen()
				sum += vals[i]
				h.Add(vals[i])
			}
			slices.Sort(vals)
			require.Equal(t, uint64(n), h.count)
			assert.Equal(t, vals[0], h.min, name)
			assert.Equal(t, vals[n-1], h.max, name)
			assert.InDelta(t, sum, h.sum, 1e-9*math.Abs(sum)+1e-12, name)
			for _, q := range qs {
				want := exactQuantile(vals, q)
				got := h.Quantile(q)
				assert.LessOrEqualf(t, math.Abs(got-want), RelErr*math.Abs(want)+1e-12,
					"%s n=%d q=%v: got %v, exact %v", name, n, q, got, want)
			}
		}
	}
}

func TestHistogramMergeEqualsAddingAll(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4)) //nolint:gosec // test data
	all, a, b := &Histogram{}, &Histogram{}, &Histogram{}
	for i := range 5000 {
		v := math.Exp(rng.NormFloat64()) - 0.5
		all.Add(v)
		if i%3 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	merged := &Histogram{}
	merged.Merge(a)
	merged.Merge(b)
	merged.Merge(&Histogram{})
	assert.Equal(t, all.count, merged.count)
	assert.Equal(t, all.min, merged.min)
	assert.Equal(t, all.max, merged.max)
	assert.Equal(t, all.zeros, merged.zeros)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		assert.Equal(t, all.Quantile(q), merged.Quantile(q), q)
	}
}

func TestHistogramEdges(t *testing.T) {
	t.Parallel()
	h := &Histogram{}
	assert.Equal(t, 0.0, h.Quantile(0.5), "empty")
	assert.Equal(t, 0.0, h.Mean(), "empty")
	h.Add(math.NaN())
	assert.Equal(t, uint64(0), h.count, "NaN is ignored")
	h.Add(3)
	assert.Equal(t, 3.0, h.Quantile(0.99), "one value is exact (clamped to min and max)")
	assert.Equal(t, 3.0, h.Mean())
}

// Adding a value must be cheap: it runs for every sample of the test.
func BenchmarkHistogramAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6)) //nolint:gosec // test data
	vals := make([]float64, 4096)
	for i := range vals {
		vals[i] = math.Exp(rng.NormFloat64())
	}
	h := &Histogram{}
	b.ResetTimer()
	for i := range b.N {
		h.Add(vals[i&4095])
	}
}
