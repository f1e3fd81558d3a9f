package result

import (
	"math"
	"slices"
)

// Summary describes repeated measurements of one figure (a cell's req/s over its runs).
//
// Defined for every n: with n = 0 every field is 0; with n = 1 Median, Mean, Min and Max are
// the value and Stdev and CVPct are 0 (one run has no spread: a report says "n=1" instead of
// reading 0 as "stable"). Stdev is the sample standard deviation (n-1 in the denominator);
// CVPct is Stdev / |Mean| × 100, and 0 when Mean is 0. No field is ever NaN or Inf, so a
// Summary always encodes as JSON.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	Stdev  float64 `json:"stdev"`
	CVPct  float64 `json:"cv_pct"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize computes the Summary of xs. NaN and ±Inf values are left out (a run without a
// figure is not a run with figure 0); xs is not modified.
func Summarize(xs []float64) Summary {
	vals := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			vals = append(vals, x)
		}
	}
	n := len(vals)
	if n == 0 {
		return Summary{}
	}
	slices.Sort(vals)
	s := Summary{N: n, Min: vals[0], Max: vals[n-1]}
	if n%2 == 1 {
		s.Median = vals[n/2]
	} else {
		s.Median = (vals[n/2-1] + vals[n/2]) / 2
	}
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	s.Mean = sum / float64(n)
	if n > 1 {
		ss := 0.0
		for _, v := range vals {
			d := v - s.Mean
			ss += d * d
		}
		s.Stdev = math.Sqrt(ss / float64(n-1))
		if s.Mean != 0 {
			s.CVPct = s.Stdev / math.Abs(s.Mean) * 100
		}
	}
	return s
}
