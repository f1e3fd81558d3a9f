package calibrate

// A Search finds the highest rate a target holds, as a load tester's adaptive controller does
// (Nighthawk's, wrk2 users by hand): from First the rate is raised by Factor while each step
// holds, then bisected between the last rate held and the first not held until they are within
// Precision of each other. Ceiling bounds it: a target still holding there has held every rate
// the client proved it can send, and the search says so (Found.AtCeiling) rather than try more.
// A First not held is lowered by Factor down to Floor before the search says none held.
//
// One try of a rate is not always a verdict: a step whose failure is in doubt (SearchStep.Doubt:
// a p99 just over the goal, another process's load) is tried twice more and the rate held only
// when the majority of the three held, so that one noisy step does not bound the search (a
// target held 1 942 req/s at 4.3 ms and "failed" 1 000 once at 10.5). The majority, not the best
// of the tries: a rate a target holds only now and then is not held.
type Search struct {
	First     int
	Ceiling   int     // 0: no bound
	Factor    float64 // > 1
	Precision float64 // stop bisecting once (not held − held) / held ≤ Precision
	Floor     int     // the lowest rate tried when First is not held (≥ 1)
}

// SearchStep is one try of a rate, and why it was not held ("" when it was). Doubt says why a
// try not held may be the machine's rather than the target's (try sets it); Again marks the
// tries that followed one in doubt.
type SearchStep struct {
	Rate  int     `json:"rate"`
	P99   float64 `json:"p99_ms"`
	Held  bool    `json:"held"`
	Why   string  `json:"why,omitempty"`
	Doubt string  `json:"doubt,omitempty"`
	Again bool    `json:"again,omitempty"`
	// Outside: other processes took more than their share of the machine while it ran, held or
	// not (try sets it), for the report to mark.
	Outside bool `json:"outside_load,omitempty"`
}

// Found is what a search found: the highest rate held (0: none, down to the floor), whether
// that is the ceiling, and every try in the order made.
type Found struct {
	Rate      int          `json:"rate"`
	AtCeiling bool         `json:"at_ceiling,omitempty"`
	Steps     []SearchStep `json:"steps"`
}

// Run runs the search: try runs one rate and says how it went; stop ends the search early (an
// interrupt), with what was found so far.
func (s Search) Run(try func(rate int) SearchStep, stop func() bool) Found {
	var f Found
	once := func(rate int, again bool) SearchStep {
		st := try(rate)
		st.Rate, st.Held, st.Again = rate, st.Why == "", again
		if st.Held {
			st.Doubt = ""
		}
		f.Steps = append(f.Steps, st)
		return st
	}
	// held judges rate: one try, or the majority of three when the first failed in doubt (the
	// second failing settles it without the third)
	held := func(rate int) bool {
		st := once(rate, false)
		ok := st.Held
		if !ok && st.Doubt != "" && !stop() && once(rate, true).Held && !stop() {
			ok = once(rate, true).Held
		}
		if ok {
			f.Rate = max(f.Rate, rate)
		}
		return ok
	}
	bounded := func(rate int) int {
		if s.Ceiling > 0 {
			return min(rate, s.Ceiling)
		}
		return rate
	}
	lo, hi := 0, 0 // the highest rate held, the lowest not held (0: none yet)
	rate := bounded(s.First)
	for !stop() {
		if held(rate) {
			lo = rate
			if s.Ceiling > 0 && rate >= s.Ceiling {
				f.AtCeiling = true
				return f
			}
			if hi > 0 {
				break // lowered below First until held: the bracket is [rate, the last not held]
			}
			rate = bounded(int(float64(rate) * s.Factor))
			continue
		}
		hi = rate
		if lo > 0 {
			break
		}
		if rate <= s.Floor {
			return f // not even the floor
		}
		rate = max(s.Floor, int(float64(rate)/s.Factor))
	}
	for lo > 0 && hi > lo && float64(hi-lo) > s.Precision*float64(lo) && !stop() {
		mid := lo + (hi-lo)/2
		if mid == lo {
			break
		}
		if held(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return f
}
