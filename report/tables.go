package report

import (
	"strconv"
)

// table is one table of the report, rendered alike as Markdown and as HTML.
type table struct {
	ID    string // HTML anchor
	Title string
	Intro string // a paragraph under the title
	Head  []string
	Rows  []row
	Notes []string // lines under the table
	Empty string   // said instead of the table when it has no rows
	Links []int    // columns holding a file beside the report, linked in HTML and Markdown
	KV    bool     // a key/value table: text that wraps, nothing right-aligned
	// Figures are its curves, drawn under it: inline in report.html, as the SVG files Write
	// puts beside report.md there.
	Figures []curve
}

// row is a table row; Class marks it for HTML ("invalid", "noproto", "bound", "baseline").
type row struct {
	Cells []string
	Class string
}

// Row classes.
const (
	classInvalid  = "invalid"
	classNoProto  = "noproto"
	classBound    = "bound"
	classBaseline = "baseline"
)

// sections builds every table of the report, in order.
func sections(b *Bench) []table {
	out := []table{
		runDetails(b),
		throughputTable(b, "reused"),
		throughputTable(b, "fresh"),
		probeTable(b),
		pacingTable(b),
	}
	out = append(out, detailsTables(b)...)
	out = append(out,
		spreadTable(b),
		resourcesTable(b),
		clientTable(b),
		equalLoadTable(b),
		capacityTable(b),
		idleTable(b),
		connectionsTable(b),
	)
	out = append(out, bodiesTables(b)...)
	return append(out,
		manifestTable(b),
		runsTable(b),
	)
}

// cellsOf returns the cells of one mode (reused, fresh) or scenario.
func (b *Bench) cellsOf(pred func(c *Cell) bool) []*Cell {
	var out []*Cell
	for i := range b.Cells {
		if pred(&b.Cells[i]) {
			out = append(out, &b.Cells[i])
		}
	}
	return out
}

func isThroughput(c *Cell) bool { return c.Mode == "reused" || c.Mode == "fresh" }

// CPUs is the manifest's CPU count, 0 when unknown.
func (b *Bench) CPUs() int {
	switch v := b.Manifest["cpus"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}
