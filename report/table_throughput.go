package report

import (
	"fmt"
	"slices"

	"github.com/proxybench/proxybench/internal/result"
)

// validText is a cell's "valid" column: yes, NO, the missing protocol, and how many runs
// made it invalid when some passed.
func validText(c *Cell) (string, string) {
	switch {
	case c.NoProto != "":
		return c.NoProto, classNoProto
	case !c.Valid && c.ValidRuns() > 0:
		return fmt.Sprintf("NO (%d of %d runs invalid)", len(c.Runs)-c.ValidRuns(), len(c.Runs)), classInvalid
	case !c.Valid:
		return "NO", classInvalid
	}
	return "yes", ""
}

func throughputTable(b *Bench, mode string) table {
	t := table{ID: mode}
	cells := b.cellsOf(func(c *Cell) bool { return c.Mode == mode })
	if mode == "reused" {
		t.Title = "Reused-connection throughput"
		t.Intro = "Steady state over keep-alive connections (HTTP/2 and HTTP/3: several streams per connection); warm-up excluded. " +
			"Led by the target's CPU per request (its process tree, over every request of the run). " +
			"req/s is the median over the valid runs, CV the coefficient of variation between them, vs direct the fraction of the bare upstream's req/s (the client's ceiling on this machine) for the same protocol."
	} else {
		t.Title = "Fresh-connection cost and throughput"
		t.Intro = "One request per brand-new connection (full TCP/TLS or QUIC handshake), verified: connections opened = requests. " +
			"Led by what the client cannot distort: the target's CPU per new connection (its handshake, accept and answer) and the time from a new connection to the first byte of its answer (TCP connect, TLS handshake, time to first byte). " +
			"req/s follows: on a machine the client shares with the target it is partly the client's."
		t.Notes = append(t.Notes, "† on req/s: the client used more CPU than the target while the requests ran (sampled together over the client's load phase: k6's start-up and summary left out), so the rate is more the client's than the target's. Client-heavy: twice as much.")
	}
	t.Empty = "No " + mode + "-connection cells in this bench."
	t.Head, t.Rows = cellRows(cells, cellColumns(inReport, mode, cells))
	t.Notes = append(t.Notes, "client CPU share: the client's part of all the CPU used on its CPUs while its load ran (as in the resources table): the higher, the more its req/s is the client's ceiling rather than the target's; with \"client-bound\" nothing was left idle either.")
	t.Notes = append(t.Notes, "upstream conns /1k req: connections the upstream accepted per 1 000 requests sent (warm-up included), median over the valid runs: "+
		"a proxy's upstream connections (near 0 when its pool keeps them), or for direct the client's own.")
	t.Notes = append(t.Notes, "upstream answered: the requests the upstream answered on the route over those the client completed there (warm-up included), lowest over the runs: "+
		"100% or more (a proxy that retries) for a target that forwards every request; a cell below it, beyond the requests in flight, is invalid (the target answered itself: a cache).")
	if ran := clientsOf(b, mode); ran != "" {
		t.Notes = append(t.Notes, "Client: "+ran+".")
	}
	if slices.ContainsFunc(cells, func(c *Cell) bool { return c.Proto == "h3" }) {
		t.Notes = append(t.Notes, "Compare HTTP/3 with HTTP/3 only: a different client stack (k6/x/proxybench/http3 over quic-go) drives it.")
	}
	return t
}

// targetCPUText is a valid cell's target CPU per request (for a fresh cell, per new
// connection), or —.
func targetCPUText(c *Cell) string {
	if v := c.targetCPU(); v > 0 {
		return fmt.Sprintf("%.0f", v)
	}
	return "—"
}

// extraQuantile is the median over a cell's valid runs of an extra trend's p50 (p99 when
// tail), or —.
func extraQuantile(c *Cell, key string, tail bool) string {
	var xs []float64
	for _, r := range c.Runs {
		if s, ok := r.Extra[key]; ok && r.Valid {
			xs = append(xs, map[bool]float64{false: s.P50, true: s.P99}[tail])
		}
	}
	if len(xs) == 0 {
		return "—"
	}
	return ms(result.Summarize(xs).Median)
}

func runsText(c *Cell) string {
	if c.NoProto != "" {
		return "—"
	}
	return fmt.Sprintf("%d/%d", c.ValidRuns(), len(c.Runs))
}

func cvText(s result.Summary) string {
	if s.N < 2 {
		return "n=1"
	}
	return fmt.Sprintf("%.1f", s.CVPct)
}

func vsText(c *Cell) string {
	if c.Target == "direct" {
		return "baseline"
	}
	if c.VsDirect == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", *c.VsDirect*100)
}
