package observe

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SweepMeasurement holds the sweeps' points, one per run: an idle run's cost, a connections
// level's req/s, p99 and RSS, a body size's MB/s. The curves dashboard reads it beside the
// capacity steps.
const SweepMeasurement = "proxybench_sweep"

// The sweeps, as the sweep tag names them.
const (
	IdleSweep        = "idle"
	ConnectionsSweep = "connections"
	BodiesSweep      = "bodies"
)

// SweepPoint is one run of a sweep as the curves dashboard reads it.
type SweepPoint struct {
	TestID, Target string
	// Proto is the bench's protocol name (h1c, h1, h2, h3), as the capacity steps'.
	Proto string
	// Sweep is IdleSweep, ConnectionsSweep or BodiesSweep; Direction a body's (download,
	// upload), empty for the others.
	Sweep, Direction string
	// X is where the point lies on its sweep: the connections of the level (idle: those held),
	// or the body's bytes.
	X     float64
	Valid bool
	RPS   float64
	P99MS float64
	// RSSPeakMB is the target's peak RSS over the run (MiB, as the report rounds it); 0: not
	// sampled.
	RSSPeakMB float64
	// Of the bodies and idle sweeps only; nil is left out of the point, not written as 0.
	MBPerS, CPUMsPerMB, KiBPerConnection *float64
}

// Point is the row a table gives the point: its protocol, place on the sweep and direction
// ("h1c 256", "h2 1048576 download"), a tag so that each point keeps a row of its own.
func (p SweepPoint) Point() string {
	s := p.Proto + " " + strconv.FormatFloat(p.X, 'f', -1, 64)
	if p.Direction != "" {
		s += " " + p.Direction
	}
	return s
}

// SweepLine is a sweep's point in InfluxDB's line protocol, tagged testid, target, proto,
// sweep, direction (bodies) and point (Point).
func SweepLine(p SweepPoint, at time.Time) string {
	var b strings.Builder
	b.WriteString(SweepMeasurement)
	for _, t := range [][2]string{{"direction", p.Direction}, {"point", p.Point()}, {"proto", p.Proto}, {"sweep", p.Sweep}, {"target", p.Target}, {"testid", p.TestID}} {
		if t[1] != "" {
			b.WriteString("," + t[0] + "=" + escapeTag(t[1]))
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fields := []string{"x=" + f(p.X), "valid=" + strconv.FormatBool(p.Valid), "rps=" + f(p.RPS), "p99_ms=" + f(p.P99MS)}
	if p.RSSPeakMB > 0 {
		fields = append(fields, "rss_peak_mb="+f(p.RSSPeakMB))
	}
	for _, o := range []struct {
		name string
		v    *float64
	}{{"mb_per_s", p.MBPerS}, {"target_cpu_ms_per_mb", p.CPUMsPerMB}, {"kib_per_connection", p.KiBPerConnection}} {
		if o.v != nil {
			fields = append(fields, o.name+"="+f(*o.v))
		}
	}
	fmt.Fprintf(&b, " %s %d\n", strings.Join(fields, ","), at.UnixNano())
	return b.String()
}
