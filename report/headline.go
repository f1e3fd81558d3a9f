package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// headLine is one line of the headline. Topic names what it is about in words that do not
// depend on the figures ("p99 at equal load, HTTP/2 TLS", without the rate), so that compare
// can set the line of one bench beside the same line of another.
type headLine struct {
	Topic string
	Text  string // the whole line, starting with Topic
}

// rest is the line without its topic: what it says.
func (l headLine) rest() string {
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l.Text, l.Topic), ":"))
}

func texts(lines []headLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Text
	}
	return out
}

// leadLines are what the client cannot distort, first in the headline and in the text
// summary: the targets' own CPU per request, and their latency at one offered load.
func leadLines(b *Bench) []headLine {
	return append(append(append(costLines(b), equalLoadLines(b)...), capacityLines(b)...), idleLines(b)...)
}

// headline is the report's "Headline" section, which compare also shows for two benches: what
// the client cannot distort, then per throughput scenario the valid targets by median req/s,
// then the client.
func headline(b *Bench) []headLine {
	// first what the client cannot distort, then req/s, which is partly the client's ceiling
	out := leadLines(b)
	var scenarios []string
	for _, c := range b.Cells {
		if isThroughput(&c) && !slices.Contains(scenarios, c.Scenario) {
			scenarios = append(scenarios, c.Scenario)
		}
	}
	for _, sc := range scenarios {
		cells := b.cellsOf(func(c *Cell) bool { return c.Scenario == sc && c.Valid && c.RPS.N > 0 })
		if len(cells) == 0 {
			continue
		}
		sort.SliceStable(cells, func(i, j int) bool { return cells[i].RPS.Median > cells[j].RPS.Median })
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = fmt.Sprintf("%s %s", c.Target, approx(c.RPS.Median))
			if c.Resources != nil && c.Resources.ClientBound {
				parts[i] += " (client-bound: the client's ceiling)"
			}
		}
		mode := "Reused"
		if cells[0].Mode == "fresh" {
			mode = "Fresh"
		}
		topic := mode + " " + protoName(cells[0].Proto)
		line := fmt.Sprintf("%s: %s req/s", topic, strings.Join(parts, "; "))
		// Said, not dropped: the targets without a figure and why.
		var invalid []string
		noProto := map[string][]string{}
		for _, c := range b.cellsOf(func(c *Cell) bool { return c.Scenario == sc }) {
			switch {
			case c.NoProto != "":
				noProto[c.NoProto] = append(noProto[c.NoProto], c.Target)
			case !c.Valid || c.RPS.N == 0:
				invalid = append(invalid, c.Target)
			}
		}
		var why []string
		if len(invalid) > 0 {
			why = append(why, "invalid: "+strings.Join(invalid, ", "))
		}
		for _, k := range sortedKeys(noProto) {
			why = append(why, k+": "+strings.Join(noProto[k], ", "))
		}
		if len(why) > 0 {
			line += " (" + strings.Join(why, "; ") + ")"
		}
		out = append(out, headLine{Topic: topic, Text: line})
	}
	if l := clientLine(b); l != "" {
		out = append(out, headLine{Topic: "Client", Text: l})
	}
	return out
}
