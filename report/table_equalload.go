package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
)

// equalLoadLines: per protocol of the equal-load pass, every target's p99 at the same offered
// rate (median over its valid runs), lowest first, "≈" between those it cannot order
// (p99Tie); a target that could not sustain it is said, in how many of its runs when it did in
// others.
func equalLoadLines(b *Bench) []headLine {
	var out []headLine
	for _, p := range protoOrder {
		p99, lag := map[string][]float64{}, map[string][]float64{}
		rate := 0.0
		var overload []string
		overloaded := map[string]int{} // runs
		clientBound := false
		for _, e := range b.EqualLoad {
			if e.Proto != p || !e.Valid {
				continue
			}
			rate = e.RateRPS
			if e.ClientBound {
				clientBound = true
				continue // not the targets': the client could not hold the rate
			}
			if e.Overload != "" {
				if !slices.Contains(overload, e.Target) {
					overload = append(overload, e.Target)
				}
				overloaded[e.Target]++
				continue
			}
			p99[e.Target] = append(p99[e.Target], e.P99)
			lag[e.Target] = append(lag[e.Target], e.StartLagP99)
		}
		topic := "p99 at equal load, " + protoName(p)
		if clientBound && len(p99) == 0 && len(overload) == 0 {
			out = append(out, headLine{Topic: topic, Text: fmt.Sprintf("%s at %s req/s: the client could not hold this rate (direct could not sustain it), so no target is ranked", topic, fmtInt(rate))})
			continue
		}
		if len(p99) == 0 && len(overload) == 0 {
			continue
		}
		targets := sortedKeys(p99)
		med := map[string]float64{}
		for _, t := range targets {
			med[t] = result.Summarize(p99[t]).Median
		}
		sort.SliceStable(targets, func(i, j int) bool { return med[targets[i]] < med[targets[j]] })
		var parts []string
		tied := false
		for i, t := range targets {
			s := t + " " + ms(med[t]) + " ms"
			if n := overloaded[t]; n > 0 {
				s += fmt.Sprintf(" (could not sustain it in %d of %d runs)", n, n+len(p99[t]))
			}
			if i > 0 && p99Tie(p99[targets[i-1]], p99[t], lag[targets[i-1]], lag[t]) {
				parts[len(parts)-1] += " ≈ " + s
				tied = true
				continue
			}
			parts = append(parts, s)
		}
		for _, t := range overload {
			if len(p99[t]) == 0 {
				parts = append(parts, t+" could not sustain it")
			}
		}
		line := fmt.Sprintf("%s at %s req/s: %s", topic, fmtInt(rate), strings.Join(parts, "; "))
		if tied {
			line += " (≈: " + tieMeaning + ")"
		}
		out = append(out, headLine{Topic: topic, Text: line})
	}
	return out
}

// tieMeaning is what "≈" between two targets' p99s at equal load says.
const tieMeaning = "not told apart: closer than the client's own lateness, or overlapping over the runs"

// p99Tie tells whether two targets' p99s at equal load, a's median no higher than b's, can be
// ordered: not when their medians are closer than the client's own lateness (the larger
// median start_lag p99 of the two: a request that left that late carries that much of the
// client in its latency), nor when a's worst run is above b's best. On this machine the
// client's lateness is about 1 ms, and nginx, haproxy and h2o's p99s at equal load lie within
// it of each other, swapping places from one bench to the next.
func p99Tie(a, b, lagA, lagB []float64) bool {
	slack := max(result.Summarize(lagA).Median, result.Summarize(lagB).Median)
	if result.Summarize(b).Median-result.Summarize(a).Median <= slack {
		return true
	}
	return len(a) > 1 && len(b) > 1 && slices.Max(a) >= slices.Min(b)
}

func equalLoadTable(b *Bench) table {
	t := table{
		ID: "equal-load", Title: "Equal-load latency",
		Intro: "Open model: every target gets the same constant arrival rate (HTTP/2 and HTTP/3 multiplexed over the reused cells' connections), so latencies compare at the same offered load. " +
			"A target with dropped iterations could not keep up: its row says so, and its latencies are those of a target behind its load. " +
			"Where direct, the upstream alone, could not sustain the rate either, the client could not hold it: that pass ranks no target. " +
			"The headline orders the targets by p99 only where the measurement can: two p99s closer than the client's own lateness (start_lag p99 of the native open model, about 1 ms here) or overlapping over the runs are shown as ≈, not ranked.",
		Head:  []string{"protocol", "target", "run", "rate req/s", "requests", "p50 ms", "p99 ms", "p99.9 ms", "dropped", "valid"},
		Empty: "No equal-load pass in this bench.",
	}
	cells := append([]EqualLoadCell{}, b.EqualLoad...)
	rank := map[string]int{}
	for i, tg := range b.Targets() {
		rank[tg] = i
	}
	sort.SliceStable(cells, func(i, j int) bool {
		if x, y := protoRank(cells[i].Proto), protoRank(cells[j].Proto); x != y {
			return x < y
		}
		if x, y := rank[cells[i].Target], rank[cells[j].Target]; x != y {
			return x < y
		}
		return cells[i].Run < cells[j].Run
	})
	for _, e := range cells {
		v, class := "yes", ""
		switch {
		case !e.Valid:
			v, class = "NO", classInvalid
		case e.ClientBound:
			v, class = "not judged: the client could not hold this rate", classBound
		case e.Overload != "":
			v, class = "yes: could not sustain "+fmtInt(e.RateRPS)+" req/s", classBound
		}
		run := "1"
		if e.Run > 1 {
			run = strconv.Itoa(e.Run)
		}
		p999 := "—"
		if e.P999 > 0 {
			p999 = ms(e.P999)
		}
		t.Rows = append(t.Rows, row{Class: class, Cells: []string{
			protoName(e.Proto), e.Target, run, fmtInt(e.RateRPS), fmtInt(e.Requests), ms(e.P50), ms(e.P99), p999, fmtInt(e.Dropped), v,
		}})
	}
	return t
}
