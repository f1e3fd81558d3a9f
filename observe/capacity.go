package observe

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CapacityStep is one rate a capacity search tried, as the curves dashboard reads it.
type CapacityStep struct {
	TestID, Target string
	// Proto is the bench's protocol name (h1c, h1, h2), not the wire protocol: h1c and h1
	// search apart.
	Proto      string
	GoalMS     float64
	OfferedRPS int
	P99MS      float64
	Held       bool
}

// CapacityLine is a step's point in InfluxDB's line protocol, tagged testid, target and proto.
func CapacityLine(s CapacityStep, at time.Time) string {
	var b strings.Builder
	b.WriteString(CapacityMeasurement)
	for _, t := range [][2]string{{"proto", s.Proto}, {"target", s.Target}, {"testid", s.TestID}} {
		if t[1] != "" {
			b.WriteString("," + t[0] + "=" + escapeTag(t[1]))
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	fmt.Fprintf(&b, " offered_rps=%d,p99_ms=%s,held=%t,goal_ms=%s %d\n", s.OfferedRPS, f(s.P99MS), s.Held, f(s.GoalMS), at.UnixNano())
	return b.String()
}
