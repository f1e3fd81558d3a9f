package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/verdict"
)

// A column is one column of a table of cells, defined once for the report's throughput tables
// and for the console's table of a scenario's runs (make k6, bench as it goes), so that the two
// never say a figure two ways. A console cell is one run; a report cell is every run of it, its
// figures the median over the valid ones. Either way a figure of an invalid cell is "—": its
// counts (reqs, failed, protocols seen) stay, to say why.
type column struct {
	head  string
	where place
	// of: the modes whose tables have it (nil: every mode)
	of []string
	// has: in the console, shown only when one of the table's cells has the figure (nil: always);
	// the report's tables keep every column, so that they read alike bench after bench
	has   func(c *Cell) bool
	value func(c *Cell) string
}

// place is where a column is shown.
type place int

const (
	inReport place = 1 << iota
	inConsole
	everywhere = inReport | inConsole
)

// cellColumns are the columns of a table of cells of mode in place, the catalogue's extra
// trends of the cells (probes: their figures and gaps) among them.
func cellColumns(where place, mode string, cells []*Cell) []column {
	var out []column
	for _, c := range append(slices.Clone(columns), extraColumns(where, cells)...) {
		if c.where&where == 0 || (c.of != nil && !slices.Contains(c.of, mode)) {
			continue
		}
		if where == inConsole && c.has != nil && !slices.ContainsFunc(cells, c.has) {
			continue
		}
		out = append(out, c)
	}
	// the validity closes every row, after the extras
	i := slices.IndexFunc(out, func(c column) bool { return c.head == "valid" })
	v := out[i]
	return append(slices.Delete(out, i, i+1), v)
}

var throughput = []string{scenarios.Reused, scenarios.Fresh}

// columns are every column a table of cells can have, in the order they are shown.
var columns = []column{
	{head: "protocol", where: inReport, value: func(c *Cell) string { return protoName(c.Proto) }},
	{head: "target", where: everywhere, value: func(c *Cell) string { return c.Target }},
	{head: "proto", where: inConsole, value: func(c *Cell) string { return c.Proto }},
	// what the client cannot distort first: per new connection for a fresh cell
	{
		head: "target CPU µs/req", where: everywhere, of: []string{scenarios.Reused},
		has: func(c *Cell) bool { return c.targetCPU() > 0 }, value: targetCPUText,
	},
	{
		head: "target CPU µs/conn", where: everywhere, of: []string{scenarios.Fresh},
		has: func(c *Cell) bool { return c.targetCPU() > 0 }, value: targetCPUText,
	},
	{head: "conn→first byte p50 ms", where: inReport, of: []string{scenarios.Fresh}, value: func(c *Cell) string { return extraQuantile(c, "conn_ttfb", false) }},
	{head: "conn→first byte p99 ms", where: inReport, of: []string{scenarios.Fresh}, value: func(c *Cell) string { return extraQuantile(c, "conn_ttfb", true) }},
	{head: "reqs", where: inConsole, value: func(c *Cell) string { return fmt.Sprintf("%.0f", c.sum(func(r Run) float64 { return r.Requests })) }},
	{head: "req/s", where: everywhere, of: append(slices.Clone(throughput), scenarios.EqualLoad), value: rpsText},
	{head: "CV %", where: inReport, of: throughput, value: func(c *Cell) string { return validOr(c, cvText(c.RPS)) }},
	{head: "runs", where: inReport, of: throughput, value: runsText},
	{head: "vs direct", where: inReport, of: throughput, value: func(c *Cell) string { return validOr(c, vsText(c)) }},
	{head: "p50 ms", where: everywhere, value: func(c *Cell) string { return validMS(c, c.P50.Median) }},
	{head: "p95 ms", where: inConsole, value: func(c *Cell) string { return validMS(c, c.median(func(r Run) float64 { return r.P95 })) }},
	{head: "p99 ms", where: everywhere, value: func(c *Cell) string { return validMS(c, c.P99.Median) }},
	{head: "connect p50 ms", where: inReport, of: []string{scenarios.Fresh}, value: func(c *Cell) string { return extraMedian(c, "http_req_connecting") }},
	{head: "TLS p50 ms", where: inReport, of: []string{scenarios.Fresh}, value: func(c *Cell) string { return extraMedian(c, "http_req_tls_handshaking") }},
	{head: "failed", where: inConsole, value: func(c *Cell) string { return fmt.Sprintf("%.0f", c.sum(func(r Run) float64 { return r.Failed })) }},
	{head: "checks ✗", where: inConsole, value: func(c *Cell) string { return fmt.Sprintf("%.0f", c.sum(func(r Run) float64 { return r.ChecksFailed })) }},
	{
		head: "new conns", where: inConsole, has: func(c *Cell) bool {
			return slices.ContainsFunc(c.Runs, func(r Run) bool { return r.NewConnections != nil })
		},
		value: func(c *Cell) string {
			if !slices.ContainsFunc(c.Runs, func(r Run) bool { return r.NewConnections != nil }) {
				return "—" // not counted (k6/x/proxybench/sse has no timings)
			}
			return fmt.Sprintf("%.0f", c.sum(func(r Run) float64 { return deref(r.NewConnections) }))
		},
	},
	{head: "client CPU share", where: inReport, of: throughput, value: clientShareText},
	{head: "upstream conns /1k req", where: everywhere, has: func(c *Cell) bool { return c.UpstreamPer1k.N > 0 }, value: func(c *Cell) string {
		if c.UpstreamPer1k.N == 0 {
			return "—"
		}
		return strconv.FormatFloat(c.UpstreamPer1k.Median, 'f', 1, 64)
	}},
	{head: "upstream answered", where: everywhere, has: func(c *Cell) bool { return c.UpstreamShare.N > 0 }, value: func(c *Cell) string {
		if c.UpstreamShare.N == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f%%", c.UpstreamShare.Min*100)
	}},
	{head: "protocol seen", where: inConsole, value: protocolsSeen},
	{head: "valid", where: everywhere, value: func(c *Cell) string { v, _ := validMarked(c); return v }},
}

// extraColumns are a console table's columns for the extra trends its cells have (a probe's
// figures, a fresh cell's handshakes): the p50 of each, and of a streamed probe's gaps the
// longest (a stall), marked * when measured under outside load.
func extraColumns(where place, cells []*Cell) []column {
	if where&inConsole == 0 {
		return nil
	}
	var keys []string
	for _, c := range cells {
		for _, r := range c.Runs {
			for k := range r.Extra {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	slices.Sort(keys)
	var out []column
	for _, k := range keys {
		out = append(out, column{head: strings.TrimPrefix(k, "http_req_") + " p50", where: inConsole, value: func(c *Cell) string { return extraMedian(c, k) }})
		if scenarios.GapTrend(k) {
			out = append(out, column{head: k + " max", where: inConsole, value: func(c *Cell) string { return longestGap(c, k) }})
		}
	}
	return out
}

// validMarked is a cell's "valid" column with what qualifies its figures (the verdict's
// qualifications), and the row's class.
func validMarked(c *Cell) (string, string) {
	v, class := validText(c)
	if class == "" && c.Target == "direct" {
		class = classBaseline
	}
	r := c.Resources
	if c.Valid && r != nil && r.ClientBound {
		// said where the rate is read: this rate is the client's ceiling
		v += ", client-bound"
		class = classBound
	}
	if c.Mode == scenarios.Fresh && c.Valid && r != nil && verdict.ClientHeavy(r.ClientOverTarget()) {
		// the handshakes cost the client more than the target: its rate is the client's
		v += fmt.Sprintf(", client-heavy (k6 used %.1f× the target's CPU)", r.ClientOverTarget())
		class = classBound
	}
	if c.Valid && r != nil && r.OutsideLoad {
		v += fmt.Sprintf(", outside load (%.0f%% of the CPU)", r.OtherCPUShare*100)
		class = classBound
	}
	return v, class
}

// rpsText is a valid cell's median req/s, † when the client outspent the target on a fresh
// cell's handshakes; — for none (probes: one VU in sequence is not a rate).
func rpsText(c *Cell) string {
	if !c.Valid || c.RPS.N == 0 {
		return "—"
	}
	s := fmtInt(c.RPS.Median)
	if r := c.Resources; c.Mode == scenarios.Fresh && r != nil && verdict.ClientOutspent(r.ClientOverTarget()) {
		s += " †"
	}
	return s
}

func clientShareText(c *Cell) string {
	if !c.Valid || c.Resources == nil || c.Resources.ClientCPUShare <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", c.Resources.ClientCPUShare*100)
}

// validMS is a valid cell's figure in ms, or —.
func validMS(c *Cell, v float64) string {
	if !c.Valid {
		return "—"
	}
	return ms(v)
}

func validOr(c *Cell, s string) string {
	if !c.Valid {
		return "—"
	}
	return s
}

// protocolsSeen lists the protocols the cell's responses arrived over, with counts when there
// is more than one.
func protocolsSeen(c *Cell) string {
	seen := map[string]float64{}
	for _, r := range c.Runs {
		for p, n := range r.ProtosSeen {
			seen[p] += n
		}
	}
	var keys []string
	for k, n := range seen {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) <= 1 {
		return strings.Join(keys, "")
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%.0f", k, seen[k])
	}
	return strings.Join(parts, " ")
}

// longestGap is the longest gap between a streamed probe's parts over the cell's runs, * when a
// run saw outside load.
func longestGap(c *Cell, key string) string {
	longest, timed := 0.0, false
	for _, r := range c.Runs {
		if s, ok := r.Extra[key]; ok {
			longest, timed = max(longest, s.Max), true
		}
	}
	if !timed {
		return "—"
	}
	if busy(c) {
		return ms(longest) + "*"
	}
	return ms(longest)
}

// sum adds up a figure over the cell's runs; median is the median of one over its valid runs.
func (c *Cell) sum(f func(Run) float64) float64 {
	t := 0.0
	for _, r := range c.Runs {
		t += f(r)
	}
	return t
}

func (c *Cell) median(f func(Run) float64) float64 {
	var xs []float64
	for _, r := range c.Runs {
		if r.Valid {
			xs = append(xs, f(r))
		}
	}
	return summarize(xs).Median
}

// targetCPU is what a request of the cell cost its target (a fresh cell: a new connection), in
// CPU µs: the mean over its valid runs' resources, else the median of the costs its runs
// recorded; 0 when unknown or the cell is invalid.
func (c *Cell) targetCPU() float64 {
	if !c.Valid {
		return 0
	}
	if c.Resources != nil && c.Resources.TargetCPUPerReqMicros > 0 {
		return c.Resources.TargetCPUPerReqMicros
	}
	return c.median(func(r Run) float64 {
		if r.Cost == nil {
			return 0
		}
		return r.Cost.TargetCPUMicros
	})
}

// table builds the rows of cells under cols, each row's class from its validity.
func cellRows(cells []*Cell, cols []column) (head []string, rows []row) {
	for _, col := range cols {
		head = append(head, col.head)
	}
	for _, c := range cells {
		r := row{}
		_, r.Class = validMarked(c)
		for _, col := range cols {
			r.Cells = append(r.Cells, col.value(c))
		}
		rows = append(rows, r)
	}
	return head, rows
}

func summarize(xs []float64) result.Summary { return result.Summarize(xs) }

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
