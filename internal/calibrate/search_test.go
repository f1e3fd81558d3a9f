package calibrate

import (
	"fmt"
	"testing"
)

// A fake target whose p99 rises past a known rate: the search finds that rate within its
// precision from any start, stops at the client's ceiling, and finds none below its floor.
func TestSearch(t *testing.T) {
	t.Parallel()
	// the fake target's p99 (1 ms unloaded) rises with the rate and passes the goal at knee req/s
	target := func(knee int, goal float64) func(int) SearchStep {
		return func(rate int) SearchStep {
			p99 := max(1, goal*float64(rate)/float64(knee))
			if p99 > goal {
				return SearchStep{P99: p99, Why: fmt.Sprintf("p99 %.1f ms over the goal", p99)}
			}
			return SearchStep{P99: p99}
		}
	}
	capacity := Search{First: 1000, Factor: 2, Precision: 0.05, Floor: 50}
	tests := []struct {
		name      string
		s         Search
		knee      int
		goal      float64
		want      int // the rate it must find, within the precision below it
		atCeiling bool
		maxSteps  int
	}{
		{"knee above the start", capacity, 13_000, 10, 13_000, false, 12},
		{"knee below the start", capacity, 300, 10, 300, false, 12},
		{"knee just above the start", capacity, 1010, 10, 1010, false, 12},
		{"held up to the client's ceiling", Search{First: 1000, Ceiling: 20_000, Factor: 2, Precision: 0.05, Floor: 50}, 1 << 30, 10, 20_000, true, 6},
		{"ceiling below the start", Search{First: 1000, Ceiling: 500, Factor: 2, Precision: 0.05, Floor: 50}, 1 << 30, 10, 500, true, 1},
		{"a goal below the unloaded p99: none", capacity, 1 << 30, 0.5, 0, false, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			steps := 0
			try := target(tt.knee, tt.goal)
			f := tt.s.Run(func(rate int) SearchStep { steps++; return try(rate) }, func() bool { return false })
			if f.AtCeiling != tt.atCeiling {
				t.Errorf("at ceiling %v, want %v (%+v)", f.AtCeiling, tt.atCeiling, f.Steps)
			}
			// what it found is held, and within the precision of the true knee below it
			lo := float64(tt.want) * (1 - tt.s.Precision)
			if (tt.want == 0 && f.Rate != 0) || float64(f.Rate) < lo || f.Rate > tt.want {
				t.Errorf("found %d, want %d (within %.0f%% below it); steps %+v", f.Rate, tt.want, tt.s.Precision*100, f.Steps)
			}
			if steps > tt.maxSteps || steps != len(f.Steps) {
				t.Errorf("%d steps tried, %d kept, want at most %d", steps, len(f.Steps), tt.maxSteps)
			}
			for _, s := range f.Steps {
				if s.Held != (s.Why == "") || (s.Held && s.Rate > f.Rate) {
					t.Errorf("step %+v does not agree with the rate found, %d", s, f.Rate)
				}
				if tt.s.Ceiling > 0 && s.Rate > tt.s.Ceiling {
					t.Errorf("step at %d req/s, over the client's ceiling %d", s.Rate, tt.s.Ceiling)
				}
			}
		})
	}
	t.Run("stopped", func(t *testing.T) {
		t.Parallel()
		calls := 0
		f := capacity.Run(target(13_000, 10), func() bool { calls++; return calls > 2 })
		if len(f.Steps) != 2 || f.Rate != 2000 {
			t.Errorf("stopped after 2 steps: found %d after %+v", f.Rate, f.Steps)
		}
	})
}

// A try not held in doubt is tried twice more and the majority of the three decides: one noisy
// try does not bound the search, a rate held once in three is not held, a second failure
// settles it without a third, and a failure not in doubt is tried once.
func TestSearchDoubt(t *testing.T) {
	t.Parallel()
	const knee = 13_000 // held below, failed (not in doubt) above
	tests := []struct {
		name  string
		noisy int    // the rate whose tries go as listed
		tries []bool // held or not (in doubt), in turn
		want  int    // the highest rate held: found within the precision below it
	}{
		{"one noisy try at the start", 1000, []bool{false, true, true}, knee},
		{"held once in three", 4000, []bool{false, true, false}, 3999},
		{"failed twice: no third try", 4000, []bool{false, false}, 3999},
	}
	s := Search{First: 1000, Factor: 2, Precision: 0.05, Floor: 50}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seen := map[int]int{}
			f := s.Run(func(rate int) SearchStep {
				n := seen[rate]
				seen[rate]++
				switch {
				case rate == tt.noisy && n >= len(tt.tries):
					t.Fatalf("try %d of %d req/s, want %d at most", n+1, rate, len(tt.tries))
				case rate == tt.noisy && !tt.tries[n]:
					return SearchStep{P99: 10.5, Why: "p99 10.5 ms over the goal of 10 ms", Doubt: "within 1.5 × the goal"}
				case rate == tt.noisy, rate <= knee:
					return SearchStep{P99: 5}
				}
				return SearchStep{P99: 80, Why: "could not sustain it"}
			}, func() bool { return false })
			if lo := float64(tt.want) * (1 - s.Precision); float64(f.Rate) < lo || f.Rate > tt.want {
				t.Errorf("found %d, want %d (within %.0f%% below it); steps %+v", f.Rate, tt.want, s.Precision*100, f.Steps)
			}
			if seen[tt.noisy] != len(tt.tries) {
				t.Errorf("%d tries of %d req/s, want %d", seen[tt.noisy], tt.noisy, len(tt.tries))
			}
			for i, st := range f.Steps {
				again := i > 0 && f.Steps[i-1].Rate == st.Rate
				if st.Again != again {
					t.Errorf("try %d (%d req/s): again %v, want %v", i, st.Rate, st.Again, again)
				}
				if st.Rate != tt.noisy && seen[st.Rate] != 1 {
					t.Errorf("%d req/s tried %d times: only a try in doubt is tried again", st.Rate, seen[st.Rate])
				}
			}
		})
	}
}
