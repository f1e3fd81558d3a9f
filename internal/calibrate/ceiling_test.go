package calibrate

import (
	"reflect"
	"testing"
)

// The ladder: doubled from 1 000 while held, one bisection between the last held and the first
// not, the unloaded p99 the reference, an unloaded run that measured nothing an error.
func TestClimb(t *testing.T) {
	t.Parallel()
	// p99 by rate: 0.2 ms up to the knee, then 10 ms; "behind" from behind on
	knee := func(knee, behind int) func(int) (float64, string) {
		return func(rate int) (float64, string) {
			switch {
			case rate >= behind:
				return 20, "could not sustain it"
			case rate > knee:
				return 10, ""
			}
			return 0.2, ""
		}
	}
	tests := []struct {
		name      string
		try       func(int) (float64, string)
		wantRate  int
		wantRates []int // the rates tried after the unloaded one
		wantErr   bool
	}{
		{"p99 rises past 5000", knee(5000, 1<<30), 4000, []int{1000, 2000, 4000, 8000, 6000}, false},
		{"behind schedule from 3000", knee(1<<30, 3000), 2000, []int{1000, 2000, 4000, 3000}, false},
		{"not even the first rate", knee(500, 1<<30), 0, []int{1000}, false},
		{"held to the top", knee(1<<30, 1<<30), ceilingLast, []int{1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000}, false},
		{"the unloaded run failed", func(int) (float64, string) { return 0, "k6 exited" }, 0, nil, true},
		{"the unloaded run behind schedule is still the reference", func(rate int) (float64, string) {
			if rate == ceilingUnloaded {
				return 0.3, "could not sustain 200 req/s"
			}
			return knee(1500, 1<<30)(rate)
		}, 1500, []int{1000, 2000, 1500}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := climb(tt.try, func() bool { return false })
			if (c.Err != "") != tt.wantErr {
				t.Fatalf("err %q, want error %v", c.Err, tt.wantErr)
			}
			var rates []int
			for _, s := range c.Steps {
				rates = append(rates, s.Rate)
				if s.Held != (s.Why == "") || (s.Held && s.Rate > c.Rate) || (!s.Held && s.Rate <= c.Rate) {
					t.Errorf("step %+v does not agree with the ceiling %d", s, c.Rate)
				}
			}
			if c.Rate != tt.wantRate || !reflect.DeepEqual(rates, tt.wantRates) {
				t.Errorf("ceiling %d after %v, want %d after %v", c.Rate, rates, tt.wantRate, tt.wantRates)
			}
		})
	}
}
