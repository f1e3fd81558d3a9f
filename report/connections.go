package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/runner"
)

// ConnectionsDir is the folder of the connections sweep's results, beside the cells': every
// one is a reused run at another CONNECTIONS, kept, but none is a cell of the bench.
const ConnectionsDir = "connections"

// ConnectionsPoint is one reused run of the connections sweep: a target over a protocol at a
// number of concurrent connections, judged as any run is.
type ConnectionsPoint struct {
	Target      string  `json:"target"`
	Proto       string  `json:"proto"`
	Connections int     `json:"connections"`
	RPS         float64 `json:"rps"`
	P99         float64 `json:"p99_ms"`
	// RSSPeakMB is the target's largest RSS over the run (its whole tree), 0 when not sampled.
	RSSPeakMB float64  `json:"rss_peak_mb,omitempty"`
	Valid     bool     `json:"valid"`
	Invalid   []string `json:"invalid"`
	File      string   `json:"file,omitempty"` // relative to the bench's folder
}

// NewConnectionsPoint is the point of a run at connections, its result r (read from file) and
// the resources sampled for it (nil: none).
func NewConnectionsPoint(connections int, file string, r *result.Result, rs *sample.Resources) ConnectionsPoint {
	run := newRun(file, r, rs)
	p := ConnectionsPoint{
		Target: r.Target, Proto: r.Proto, Connections: connections, P99: run.P99,
		Valid: run.Valid, Invalid: run.Invalid, File: file,
	}
	if p.Proto == "" {
		p.Proto = runner.Job{Scenario: r.Scenario}.Requires()
	}
	if run.RPS != nil {
		p.RPS = *run.RPS
	}
	if rs != nil {
		p.RSSPeakMB = result.Round(rs.RSSPeakMB, 1)
	}
	return p
}

// AddConnections adds one point of the sweep.
func (b *Bench) AddConnections(p ConnectionsPoint) {
	b.Connections = append(b.Connections, p)
}

// connectionsSorted are the sweep's points in protocol order, direct first, then by target as
// they ran, each target's in rising connections.
func connectionsSorted(b *Bench) []ConnectionsPoint {
	pts := slices.Clone(b.Connections)
	targets := b.connectionTargets()
	slices.SortStableFunc(pts, func(x, y ConnectionsPoint) int {
		switch {
		case x.Proto != y.Proto:
			return protoRank(x.Proto) - protoRank(y.Proto)
		case x.Target != y.Target:
			return slices.Index(targets, x.Target) - slices.Index(targets, y.Target)
		}
		return x.Connections - y.Connections
	})
	return pts
}

// connectionTargets are the sweep's targets, direct first, then as they first ran.
func (b *Bench) connectionTargets() []string {
	var out []string
	for _, p := range b.Connections {
		if !slices.Contains(out, p.Target) {
			out = append(out, p.Target)
		}
	}
	slices.SortStableFunc(out, func(x, y string) int {
		return map[bool]int{true: 0, false: 1}[x == "direct"] - map[bool]int{true: 0, false: 1}[y == "direct"]
	})
	return out
}

// connectionsTable is every point of the sweep, with its curves: req/s, p99 and the target's
// RSS against connections, per protocol, one line per target.
func connectionsTable(b *Bench) table {
	t := table{
		ID: "connections", Title: "Connections sweep",
		Intro: "The reused cells again at each of CONNECTION_LEVELS concurrent connections (CONNECTIONS; h2 and h3 with STREAMS per connection as always), each run DURATION long and judged as any run: " +
			"req/s and p99 over the measured window, and the target's peak RSS over the run. A target that caps connections below the level is invalid there, with the reason.",
		Head:  []string{"protocol", "target", "connections", "req/s", "p99 ms", "target RSS MiB", "verdict"},
		Links: []int{7},
		Empty: "No connections sweep in this bench (MODES=connections).",
	}
	for _, p := range connectionsSorted(b) {
		verdict, class, rps, p99 := "valid", "", fmtInt(p.RPS), ms(p.P99)
		if p.Target == "direct" {
			class = classBaseline
		}
		if !p.Valid {
			verdict, class, rps, p99 = "invalid: "+strings.Join(p.Invalid, "; "), classInvalid, "—", "—"
		}
		rss := "—"
		if p.RSSPeakMB > 0 {
			rss = fmt.Sprintf("%.1f", p.RSSPeakMB)
		}
		t.Rows = append(t.Rows, row{Class: class, Cells: []string{protoName(p.Proto), p.Target, fmtInt(float64(p.Connections)), rps, p99, rss, verdict, p.File}})
	}
	if len(t.Rows) > 0 {
		t.Head = append(t.Head, "result")
		t.Figures = connectionsCurves(b)
	} else {
		t.Links = nil
	}
	return t
}

// connectionsCurves: per protocol, req/s, p99 and RSS against connections, one line per
// target; an invalid run's point is drawn hollow, at what it measured.
func connectionsCurves(b *Bench) []curve {
	var out []curve
	figures := []struct {
		id, label string
		logY      bool
		y         func(ConnectionsPoint) float64
	}{
		{"rps", "req/s", false, func(p ConnectionsPoint) float64 { return p.RPS }},
		{"p99", "p99, ms", true, func(p ConnectionsPoint) float64 { return p.P99 }},
		{"rss", "target RSS, MiB", false, func(p ConnectionsPoint) float64 { return p.RSSPeakMB }},
	}
	pts := connectionsSorted(b)
	for _, proto := range protoOrder {
		if !slices.ContainsFunc(pts, func(p ConnectionsPoint) bool { return p.Proto == proto }) {
			continue
		}
		for _, f := range figures {
			c := curve{
				ID: "curve-connections-" + f.id + "-" + proto, Title: fmt.Sprintf("%s against connections, %s", f.label, protoName(proto)),
				XLabel: "concurrent connections", YLabel: f.label, LogX: true, LogY: f.logY,
			}
			for _, t := range b.connectionTargets() {
				l := curveLine{Series: t}
				for _, p := range pts {
					if p.Proto != proto || p.Target != t || f.y(p) <= 0 {
						continue
					}
					title := fmt.Sprintf("%s at %d connections: %s %s", t, p.Connections, f.label, approx(f.y(p)))
					if !p.Valid {
						title += ": invalid"
					}
					l.Points = append(l.Points, curvePoint{X: float64(p.Connections), Y: f.y(p), Open: !p.Valid, Title: title})
				}
				if len(l.Points) > 0 {
					c.Lines = append(c.Lines, l)
				}
			}
			out = append(out, c)
		}
	}
	return out
}
