package verdict

import "fmt"

// Pacing is what a paced probe (stream, sse) measured of its parts' timing, response by
// response (scenarios/lib/probes.js pacingOf): the rule's figures, how many responses each
// rule held back, with the figure behind them, and how many stalled.
type Pacing struct {
	Part        string  `json:"part"`  // "chunk", "event"
	Parts       string  `json:"parts"` // "chunks", "events"
	IntervalMS  float64 `json:"interval_ms"`
	TogetherMS  float64 `json:"together_ms"`
	StallOverMS float64 `json:"stall_over_ms"`
	Responses   float64 `json:"responses"` // judged: every measured response that answered 200
	// FirstHeld: responses whose first part came after the upstream sent the next; FirstMaxMS
	// the latest of those first parts (nil: none held, or none had a part at all).
	FirstHeld  float64  `json:"first_held"`
	FirstMaxMS *float64 `json:"first_max_ms"`
	// TogetherHeld: responses with two parts closer together than the upstream sends them;
	// TogetherMinMS the closest two.
	TogetherHeld  float64  `json:"together_held"`
	TogetherMinMS *float64 `json:"together_min_ms"`
	Stalls        float64  `json:"stalls"` // responses with a gap over StallOverMS: a figure
}

// heldBackCell is a cell held back: buffering is a proxy's setting and holds back every response
// alike, so more than half its responses held back by a rule makes the cell invalid. Fewer is
// what a client descheduled while it read makes too (Sporadic says so beside the cell).
func heldBackCell(held, responses float64) bool {
	return held > 0 && 2*held > responses
}

// firstHeldBack: the first part came only after the upstream had sent the next one.
func firstHeldBack(r Run) string {
	p := r.Pacing
	if p == nil || !heldBackCell(p.FirstHeld, p.Responses) {
		return ""
	}
	got := "none"
	if p.FirstMaxMS != nil {
		got = "up to " + ms(*p.FirstMaxMS)
	}
	return fmt.Sprintf("first %s held back in %s of %s responses: want it before the upstream sends the next, %s after the request; got %s",
		p.Part, n(p.FirstHeld), n(p.Responses), ms(p.IntervalMS), got)
}

// partsTogether: two parts came closer together than the upstream ever sends them.
func partsTogether(r Run) string {
	p := r.Pacing
	if p == nil || !heldBackCell(p.TogetherHeld, p.Responses) {
		return ""
	}
	got := ""
	if p.TogetherMinMS != nil {
		got = fmt.Sprintf(": two came %s apart", ms(*p.TogetherMinMS))
	}
	return fmt.Sprintf("%s released together in %s of %s responses%s, want at least %s (the upstream sends them %s apart or more)",
		p.Parts, n(p.TogetherHeld), n(p.Responses), got, ms(p.TogetherMS), ms(p.IntervalMS))
}

// Sporadic says what the pacing rules held back in too few responses to judge the cell by
// ("" for none): a figure beside it, as a stall is.
func (p *Pacing) Sporadic() string {
	if p == nil {
		return ""
	}
	var says []string
	if p.FirstHeld > 0 && !heldBackCell(p.FirstHeld, p.Responses) {
		says = append(says, fmt.Sprintf("first %s held back in %s", p.Part, n(p.FirstHeld)))
	}
	if p.TogetherHeld > 0 && !heldBackCell(p.TogetherHeld, p.Responses) {
		says = append(says, fmt.Sprintf("%s released together in %s", p.Parts, n(p.TogetherHeld)))
	}
	if len(says) == 0 {
		return ""
	}
	return fmt.Sprintf("%s of %s responses: not more than half, so not judged (a client descheduled while it read makes that too)",
		joinAnd(says), n(p.Responses))
}

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return s[0]
}

// ms formats milliseconds as the reasons say them: one decimal, none when whole.
func ms(x float64) string {
	return fmt.Sprintf("%g ms", round(x, 1))
}
