package verdict

import (
	"fmt"
	"strings"
)

// Held says why a step of a capacity search did not hold its rate within the latency goal, or
// "" when it did: the run must be valid (Judge), sustain the rate (Overload: no more than
// BehindShare of its requests behind schedule) and keep its p99 within goalMS. The search's
// answer is the highest rate held; this is the one place a step is judged.
func Held(r Run, p99, goalMS float64) string {
	if why := Judge(r); len(why) > 0 {
		return "invalid: " + strings.Join(why, "; ")
	}
	if o := Overload(r); o != "" {
		return o
	}
	if p99 > goalMS {
		return fmt.Sprintf("p99 %.3g ms over the goal of %g ms", p99, goalMS)
	}
	return ""
}
