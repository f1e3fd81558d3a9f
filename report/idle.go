package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/scenarios"
)

// idleRow is one idle run as the idle table and the headline read it: what the target held
// of the connections planned, and what holding them cost it.
type idleRow struct {
	target, proto string
	run           Run
}

// held is the connections the client still held at the end; planned when not counted.
func (r idleRow) held() string {
	if c := r.run.IdleCost; c != nil {
		return fmtInt(c.ConnectionsHeld)
	}
	return "—"
}

// idleRows are the bench's idle runs (one per target and protocol), in protocol order, direct
// first.
func idleRows(b *Bench) []idleRow {
	var out []idleRow
	for _, c := range b.cellsOf(func(c *Cell) bool { return c.Mode == scenarios.Idle && c.NoProto == "" && len(c.Runs) > 0 }) {
		out = append(out, idleRow{target: c.Target, proto: c.Proto, run: c.Runs[0]})
	}
	slices.SortStableFunc(out, func(x, y idleRow) int {
		switch {
		case x.proto != y.proto:
			return protoRank(x.proto) - protoRank(y.proto)
		case (x.target == "direct") != (y.target == "direct"):
			return map[bool]int{true: -1, false: 1}[x.target == "direct"]
		}
		return 0
	})
	return out
}

// kibText is the RSS each held connection cost, as the table and the headline say it.
func kibText(c *result.IdleCost) string {
	if c == nil || c.ConnectionsHeld == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", c.KiBPerConnection)
}

// idleTable is, per protocol and target, the connections held idle and what they cost.
func idleTable(b *Bench) table {
	t := table{
		ID: "idle", Title: "Idle connections",
		Intro: "Each target holds IDLE_CONNECTIONS keep-alive connections, opened one after another on the native loop (each with one checked GET /), then left idle but for a trickle of requests over a few of them (its latency is the trickle p99). " +
			"The runner reads the target's RSS before k6 starts and over the hold: their difference over the connections held is its memory per idle connection; its CPU over the hold is what idling (and the trickle) cost. " +
			"A target that refused, closed or never answered connections below the plan is invalid, and says how many and why.",
		Head:  []string{"protocol", "target", "planned", "held", "KiB per idle connection", "RSS before → held MiB", "idle CPU cores", "trickle p99 ms", "verdict"},
		Empty: "No idle connections in this bench (MODES=idle).",
	}
	for _, r := range idleRows(b) {
		c := r.run.IdleCost
		rss, cpu := "—", "—"
		if c != nil {
			rss = fmt.Sprintf("%.1f → %.1f", c.RSSBeforeMB, c.RSSHeldMB)
			cpu = fmt.Sprintf("%.3f", c.CPUCores)
		}
		verdict, class := "valid", ""
		if r.target == "direct" {
			class = classBaseline
		}
		if !r.run.Valid {
			verdict, class = "invalid: "+strings.Join(r.run.Invalid, "; "), classInvalid
		}
		t.Rows = append(t.Rows, row{Class: class, Cells: []string{
			protoName(r.proto), r.target, fmtInt(r.run.IdlePlanned), r.held(), kibText(c), rss, cpu, ms(r.run.P99), verdict,
		}})
	}
	if len(t.Rows) > 0 {
		t.Notes = append(t.Notes, "RSS is the target's whole process tree, restarted before each idle run: a process that grew in an earlier run would hand the new connections memory it kept.")
	}
	return t
}

// idleLines are the headline's memory per idle connection: per protocol, every target with a
// valid idle run, least first.
func idleLines(b *Bench) []headLine {
	by := map[string][]idleRow{}
	var protos []string
	for _, r := range idleRows(b) {
		if !r.run.Valid || r.run.IdleCost == nil || r.run.IdleCost.ConnectionsHeld == 0 {
			continue
		}
		if !slices.Contains(protos, r.proto) {
			protos = append(protos, r.proto)
		}
		by[r.proto] = append(by[r.proto], r)
	}
	var out []headLine
	for _, p := range protos {
		rows := by[p]
		slices.SortStableFunc(rows, func(x, y idleRow) int {
			return cmpFloat(x.run.IdleCost.KiBPerConnection, y.run.IdleCost.KiBPerConnection)
		})
		parts := make([]string, len(rows))
		for i, r := range rows {
			parts[i] = fmt.Sprintf("%s %s", r.target, kibText(r.run.IdleCost))
		}
		topic := "Memory per idle connection, " + protoName(p)
		out = append(out, headLine{Topic: topic, Text: fmt.Sprintf("%s (%s connections held): %s KiB", topic, fmtInt(rows[0].run.IdlePlanned), strings.Join(parts, "; "))})
	}
	return out
}
