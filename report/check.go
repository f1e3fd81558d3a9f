package report

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Check renders b and verifies the report against the runs it came from: every run appears
// with its result file and validity, every invalid run's reason is said, every not-run cell
// is said, every throughput cell with a valid run has its row (a valid point of the body-size
// sweep its MB/s), every chart has one series per target that has cells of its kind, every
// table's curves are inline in report.html with their lines and shown in report.md, and every
// chart of the first screen is in both reports. The end-to-end test calls it on a real (tiny) run.
func Check(b *Bench) error {
	var md, page bytes.Buffer
	if err := Markdown(&md, b); err != nil {
		return err
	}
	if err := HTML(&page, b); err != nil {
		return err
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	m, h := md.String(), page.String()

	if !strings.Contains(m, shareLine(b)) {
		fail("report.md does not say how the CPUs are shared")
	}
	for _, c := range b.Cells {
		name := c.Scenario + " " + c.Proto + " " + c.Target
		if c.NoProto != "" {
			if !strings.Contains(m, "- "+mdEscape(name)+": "+mdEscape(c.NoProto)) {
				fail("%s: not run (%s), and the report does not say so", name, c.NoProto)
			}
			continue
		}
		for i, r := range c.Runs {
			valid := "yes"
			if !r.Valid {
				valid = "NO"
			}
			row := fmt.Sprintf("| %s | %s | %s | %d |", mdEscape(c.Scenario), mdEscape(c.Proto), mdEscape(c.Target), i+1)
			line := lineWith(m, row)
			if line == "" {
				fail("%s run %d: no row in the table of every run", name, i+1)
				continue
			}
			if r.File == "" {
				fail("%s run %d: no result file", name, i+1)
			}
			if !strings.Contains(line, "| "+valid+" |") || !strings.Contains(line, mdEscape(r.File)) {
				fail("%s run %d: row %q does not say valid=%s and file %s", name, i+1, line, valid, r.File)
			}
			for _, why := range r.Invalid {
				if !strings.Contains(m, mdEscape(why)) {
					fail("%s run %d: invalid, but the reason %q is not in the report", name, i+1, why)
				}
			}
		}
		if isThroughput(&c) && c.Valid && c.RPS.N > 0 {
			// the fresh table leads with the target's cost, so req/s is a later column there;
			// a † marks it where the client used more CPU than the target
			row := fmt.Sprintf("| %s | %s |", mdEscape(protoName(c.Proto)), mdEscape(c.Target))
			rps := fmtInt(c.RPS.Median)
			found := false
			for _, line := range strings.Split(m, "\n") {
				if strings.HasPrefix(line, row) && (strings.Contains(line, "| "+rps+" |") || strings.Contains(line, "| "+rps+" † |")) {
					found = true
					break
				}
			}
			if !found {
				fail("%s: no throughput row %q with req/s %s", name, row, rps)
			}
		}
	}
	for _, ch := range charts(b) {
		got := chartSeries(h)[ch.ID]
		if strings.Join(got, ",") != strings.Join(ch.Series, ",") || len(got) == 0 {
			fail("chart %s: series %v, want %v", ch.ID, got, ch.Series)
		}
	}
	for _, t := range sections(b) {
		for _, c := range t.Figures {
			var want []string
			for _, l := range c.Lines {
				want = append(want, l.Series)
			}
			if got := chartSeries(h)[c.ID]; strings.Join(got, ",") != strings.Join(want, ",") || len(got) == 0 {
				fail("curve %s: series %v in report.html, want %v", c.ID, got, want)
			}
			if !strings.Contains(m, "]("+mdLink(c.file())+")") {
				fail("curve %s: not shown in report.md", c.ID)
			}
		}
	}
	for _, c := range b.Bodies {
		checkBodyPoint(m, &c, fail)
	}
	for _, ch := range firstScreen(b).charts() {
		if !strings.Contains(h, `<svg class="mini" id="`+ch.ID+`"`) || !strings.Contains(m, "]("+mdLink(ch.file())+")") {
			fail("first-screen chart %s: not inline in report.html, or not shown in report.md", ch.ID)
		}
	}
	if loc := external.FindString(h); loc != "" {
		fail("report.html refers to an outside resource: %q", loc)
	}
	return errors.Join(errs...)
}

// lineWith is the first line of s that contains sub.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// external matches anything in a page that would make a browser fetch something: an
// attribute pointing at http(s) or a protocol-relative URL, CSS url() or @import.
var external = regexp.MustCompile(`(?i)(\b(src|href|srcset|action|poster|data|xlink:href|background)\s*=\s*["']?\s*(https?:|//))|url\(|@import`)

// chartSeries maps each chart's and curve's id in page to its series' targets, in order.
func chartSeries(page string) map[string][]string {
	out := map[string][]string{}
	for _, m := range svgRE.FindAllStringSubmatch(page, -1) {
		out[m[1]] = nil
		for _, s := range seriesRE.FindAllStringSubmatch(m[0], -1) {
			out[m[1]] = append(out[m[1]], s[1])
		}
	}
	return out
}

var (
	svgRE    = regexp.MustCompile(`(?s)<svg class="(?:chart|curve)" id="([^"]+)".*?</svg>`)
	seriesRE = regexp.MustCompile(`<g class="series" data-target="([^"]+)"`)
)
