package result

import (
	"encoding/json"
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"only NaN", []float64{math.NaN()}, Summary{}},
		// One run: no spread, and none claimed.
		{"one", []float64{42}, Summary{N: 1, Median: 42, Mean: 42, Min: 42, Max: 42}},
		// 1,2: mean 1.5, squares 0.25+0.25 = 0.5, /(n-1)=0.5, sd=√0.5=0.70710678, cv=47.140452%.
		{"two", []float64{2, 1}, Summary{N: 2, Median: 1.5, Mean: 1.5, Stdev: 0.7071067811865476, CVPct: 47.14045207910317, Min: 1, Max: 2}},
		// 2,4,4,4,5,5,7,9: mean 5, squares 9+1+1+1+0+0+4+16 = 32, /7, sd=√(32/7)=2.13808994,
		// median (4+5)/2, cv=42.761799%.
		{"eight", []float64{9, 4, 2, 5, 4, 7, 4, 5}, Summary{N: 8, Median: 4.5, Mean: 5, Stdev: 2.138089935299395, CVPct: 42.7617987059879, Min: 2, Max: 9}},
		// 100,110,90: mean 100, squares 0+100+100 = 200, /2 = 100, sd 10, cv 10%.
		{"three", []float64{100, 110, 90}, Summary{N: 3, Median: 100, Mean: 100, Stdev: 10, CVPct: 10, Min: 90, Max: 110}},
		// Identical runs: no spread.
		{"equal", []float64{7, 7, 7}, Summary{N: 3, Median: 7, Mean: 7, Min: 7, Max: 7}},
		// Mean 0: CV is undefined and reported as 0, not NaN. squares 1+1, /1, sd √2.
		{"zero mean", []float64{-1, 1}, Summary{N: 2, Median: 0, Mean: 0, Stdev: math.Sqrt2, Min: -1, Max: 1}},
		// NaN and Inf are not runs.
		{"skips NaN", []float64{1, math.NaN(), 3, math.Inf(1)}, Summary{N: 2, Median: 2, Mean: 2, Stdev: math.Sqrt2, CVPct: 70.71067811865476, Min: 1, Max: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Summarize(tc.in)
			if !summaryClose(got, tc.want) {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("Summary does not encode: %v", err)
			}
		})
	}
}

func TestSummarizeKeepsInput(t *testing.T) {
	t.Parallel()
	in := []float64{3, 1, 2}
	Summarize(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("Summarize sorted its input: %v", in)
	}
}

func summaryClose(a, b Summary) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
	return a.N == b.N && eq(a.Median, b.Median) && eq(a.Mean, b.Mean) && eq(a.Stdev, b.Stdev) &&
		eq(a.CVPct, b.CVPct) && eq(a.Min, b.Min) && eq(a.Max, b.Max)
}
