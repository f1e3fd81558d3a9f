package verdict

import "slices"

// Add sums into c the counts of one part of a split run (an execution segment), named by
// label in what it says in words; the connections opened are the caller's to sum, as a part
// that did not count them leaves the whole uncounted.
func (c *Counts) Add(p *Counts, label string) {
	if c.Unit == "" {
		c.Unit = p.Unit
	}
	c.Answered += p.Answered
	c.Iterations += p.Iterations
	c.WrongProto += p.WrongProto
	addEach(&c.BadResponses, p.BadResponses)
	addEach(&c.Failures, p.Failures)
	addEach(&c.ConnectionsLost, p.ConnectionsLost)
	if p.ConnectionsHeld != nil {
		v := deref(c.ConnectionsHeld) + *p.ConnectionsHeld
		c.ConnectionsHeld = &v
	}
	if at := p.BodyDiffersAt; at != nil && (c.BodyDiffersAt == nil || *at < *c.BodyDiffersAt) {
		v := *at
		c.BodyDiffersAt, c.BodyBytes = &v, p.BodyBytes
	}
	if c.BodyCut += p.BodyCut; p.BodyCut > 0 {
		c.BodyBytes = p.BodyBytes
	}
	for _, name := range p.FailedChecks {
		if !slices.Contains(c.FailedChecks, name) {
			c.FailedChecks = append(c.FailedChecks, name)
		}
	}
	for _, t := range p.FailedThresholds {
		c.FailedThresholds = append(c.FailedThresholds, label+": "+t)
	}
	c.SetupOK = c.SetupOK && p.SetupOK
	for _, f := range p.Findings {
		c.Findings = append(c.Findings, label+": "+f)
	}
}

// addEach adds each count of from to *to's, making *to when it has none.
func addEach(to *map[string]float64, from map[string]float64) {
	for why, k := range from {
		if *to == nil {
			*to = map[string]float64{}
		}
		(*to)[why] += k
	}
}
