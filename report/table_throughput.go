package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/verdict"
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
	t := table{ID: mode, Head: []string{"protocol", "target", "req/s (median)", "CV %", "runs", "vs direct", "p50 ms", "p99 ms"}}
	cells := b.cellsOf(func(c *Cell) bool { return c.Mode == mode })
	if mode == "reused" {
		t.Title = "Reused-connection throughput"
		t.Intro = "Steady state over keep-alive connections (HTTP/2 and HTTP/3: several streams per connection); warm-up excluded. " +
			"req/s is the median over the valid runs, CV the coefficient of variation between them, vs direct the fraction of the bare upstream's req/s (the client's ceiling on this machine) for the same protocol."
	} else {
		t.Title = "Fresh-connection cost and throughput"
		t.Intro = "One request per brand-new connection (full TCP/TLS or QUIC handshake), verified: connections opened = requests. " +
			"Led by what the client cannot distort: the target's CPU per new connection (its handshake, accept and answer) and the time from a new connection to the first byte of its answer (TCP connect, TLS handshake, time to first byte). " +
			"req/s follows: on a machine the client shares with the target it is partly the client's."
		t.Head = append([]string{"protocol", "target", "target CPU µs/conn", "conn→first byte p50 ms", "conn→first byte p99 ms"}, t.Head[2:]...)
		t.Head = append(t.Head, "connect p50 ms", "TLS p50 ms")
		t.Notes = append(t.Notes, "† on req/s: the client used more CPU than the target while the requests ran (sampled together over the client's load phase: k6's start-up and summary left out), so the rate is more the client's than the target's. Client-heavy: twice as much.")
	}
	t.Head = append(t.Head, "client CPU share", "upstream conns /1k req", "upstream answered", "valid")
	t.Empty = "No " + mode + "-connection cells in this bench."
	t.Notes = append(t.Notes, "client CPU share: the client's part of all the CPU used on its CPUs while its load ran (as in the resources table): the higher, the more its req/s is the client's ceiling rather than the target's; with \"client-bound\" nothing was left idle either.")
	t.Notes = append(t.Notes, "upstream conns /1k req: connections the upstream accepted per 1 000 requests sent (warm-up included), median over the valid runs: "+
		"a proxy's upstream connections (near 0 when its pool keeps them), or for direct the client's own.")
	t.Notes = append(t.Notes, "upstream answered: the requests the upstream answered on the route over those the client completed there (warm-up included), lowest over the runs: "+
		"100% or more (a proxy that retries) for a target that forwards every request; a cell below it, beyond the requests in flight, is invalid (the target answered itself: a cache).")
	for _, c := range cells {
		v, class := validText(c)
		if class == "" && c.Target == "direct" {
			class = classBaseline
		}
		if c.Valid && c.Resources != nil && c.Resources.ClientBound {
			// Said where the rate is read: this rate is the client's ceiling.
			v += ", client-bound"
			class = classBound
		}
		if r := c.Resources; mode == "fresh" && c.Valid && r != nil && verdict.ClientHeavy(r.ClientOverTarget()) {
			// the handshakes cost the client more than the target: its rate is the client's
			v += fmt.Sprintf(", client-heavy (k6 used %.1f× the target's CPU)", r.ClientOverTarget())
			class = classBound
		}
		if c.Valid && c.Resources != nil && c.Resources.OutsideLoad {
			v += fmt.Sprintf(", outside load (%.0f%% of the CPU)", c.Resources.OtherCPUShare*100)
			class = classBound
		}
		r := []string{protoName(c.Proto), c.Target}
		if mode == "fresh" {
			r = append(r, targetCPUText(c), extraQuantile(c, "conn_ttfb", false), extraQuantile(c, "conn_ttfb", true))
		}
		if c.Valid && c.RPS.N > 0 {
			rps := fmtInt(c.RPS.Median)
			if r := c.Resources; mode == "fresh" && r != nil && verdict.ClientOutspent(r.ClientOverTarget()) {
				rps += " †"
			}
			r = append(r, rps, cvText(c.RPS), runsText(c), vsText(c), ms(c.P50.Median), ms(c.P99.Median))
		} else {
			r = append(r, "—", "—", runsText(c), "—", "—", "—")
		}
		if mode == "fresh" {
			r = append(r, extraMedian(c, "http_req_connecting"), extraMedian(c, "http_req_tls_handshaking"))
		}
		share := "—"
		if c.Valid && c.Resources != nil && c.Resources.ClientCPUShare > 0 {
			share = fmt.Sprintf("%.0f%%", c.Resources.ClientCPUShare*100)
		}
		up := "—"
		if c.UpstreamPer1k.N > 0 {
			up = strconv.FormatFloat(c.UpstreamPer1k.Median, 'f', 1, 64)
		}
		answered := "—"
		if c.UpstreamShare.N > 0 {
			answered = fmt.Sprintf("%.1f%%", c.UpstreamShare.Min*100)
		}
		r = append(r, share, up, answered, v)
		t.Rows = append(t.Rows, row{Cells: r, Class: class})
	}
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
	if !c.Valid || c.Resources == nil || c.Resources.TargetCPUPerReqMicros <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", c.Resources.TargetCPUPerReqMicros)
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
