package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A point with no figure (Gap) breaks its line: it is drawn hollow on the x axis, no line
// passes through it, and its Y, whatever it holds, stretches no axis; the points around it keep
// theirs.
func TestCurveGap(t *testing.T) {
	t.Parallel()
	pt := func(x, y float64) curvePoint { return curvePoint{X: x, Y: y, Title: "p"} }
	gap := curvePoint{X: 4, Y: 1e9, Gap: true, Title: "invalid"}
	tests := []struct {
		name             string
		points           []curvePoint
		lines, dots, gap int
	}{
		{"no gap", []curvePoint{pt(1, 10), pt(2, 20), pt(4, 30), pt(8, 40)}, 1, 4, 0},
		{"a gap inside", []curvePoint{pt(1, 10), pt(2, 20), gap, pt(8, 40), pt(16, 30)}, 2, 4, 1},
		{"a gap at the end", []curvePoint{pt(1, 10), pt(2, 20), gap}, 1, 2, 1},
		{"a lone point each side", []curvePoint{pt(1, 10), gap, pt(8, 40)}, 0, 2, 1},
	}
	circle := regexp.MustCompile(`<circle class="(point|gap)" cx="[0-9.]+" cy="([0-9.]+)"`)
	tick := regexp.MustCompile(`text-anchor="end" fill="#4b5563">([^<]+)<`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := curve{ID: "c", Title: "t", LogX: true, Lines: []curveLine{{Series: "nginx", Points: tc.points}}}
			svg := c.svg(map[string]string{"nginx": "#123456"}, true)
			if err := xmlWellFormed(svg); err != nil {
				t.Fatalf("no well-formed SVG: %v", err)
			}
			if n := strings.Count(svg, "<polyline"); n != tc.lines {
				t.Errorf("%d lines, want %d", n, tc.lines)
			}
			dots, gaps, gapY, maxY := 0, 0, 0.0, 0.0
			for _, m := range circle.FindAllStringSubmatch(svg, -1) {
				y, _ := strconv.ParseFloat(m[2], 64)
				if m[1] == "gap" {
					gaps, gapY = gaps+1, y
					continue
				}
				dots, maxY = dots+1, max(maxY, y)
			}
			if dots != tc.dots || gaps != tc.gap {
				t.Errorf("%d points and %d gaps, want %d and %d", dots, gaps, tc.dots, tc.gap)
			}
			// the gap sits on the x axis, below every point (SVG's y grows downwards)
			if tc.gap > 0 && gapY <= maxY {
				t.Errorf("the gap at y %.1f, want below every point (lowest at %.1f)", gapY, maxY)
			}
			ticks := tick.FindAllStringSubmatch(svg, -1)
			if top, err := strconv.ParseFloat(ticks[len(ticks)-1][1], 64); err != nil || top > 50 {
				t.Errorf("the y axis tops at %s, want the points' 40 at most, rounded up: not the gap's Y", ticks[len(ticks)-1][1])
			}
		})
	}
}
