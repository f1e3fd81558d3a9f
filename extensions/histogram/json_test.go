package histogram

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A histogram read back from its JSON is the same histogram: every quantile, count and sum.
func TestHistogramJSONRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4)) //nolint:gosec // test data
	var h Histogram
	for range 5000 {
		h.Add(rng.NormFloat64() * 10)
	}
	h.Add(0)
	data, err := json.Marshal(&h)
	require.NoError(t, err)
	var back Histogram
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, h.Count(), back.Count())
	assert.Equal(t, h.Sum(), back.Sum())
	for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 1} {
		assert.Equal(t, h.Quantile(q), back.Quantile(q), "q=%v", q)
	}
}

func TestHistogramJSONRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, want string
	}{
		{"other resolution", `{"sub_bits":4,"count":0}`, "sub_bits 4"},
		{"count off", `{"sub_bits":8,"count":3,"pos":{"off":100,"counts":[1]}}`, "hold 1 values, count says 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var h Histogram
			assert.ErrorContains(t, json.Unmarshal([]byte(tt.json), &h), tt.want)
		})
	}
}
