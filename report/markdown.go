package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write writes report.md and report.html of b into dir, and beside them the first screen's
// charts as SVG files, which report.md shows as images.
func Write(dir string, b *Bench) error {
	col := colors(b.Targets())
	for _, m := range firstScreen(b).charts() {
		if err := os.WriteFile(filepath.Join(dir, m.file()), []byte(m.svg(col, true)), 0o644); err != nil {
			return err
		}
	}
	for _, t := range sections(b) {
		for _, c := range t.Figures {
			if err := os.WriteFile(filepath.Join(dir, c.file()), []byte(c.svg(col, true)), 0o644); err != nil {
				return err
			}
		}
	}
	md, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	if err := Markdown(md, b); err != nil {
		md.Close()
		return err
	}
	if err := md.Close(); err != nil {
		return err
	}
	h, err := os.Create(filepath.Join(dir, "report.html"))
	if err != nil {
		return err
	}
	if err := HTML(h, b); err != nil {
		h.Close()
		return err
	}
	return h.Close()
}

// Markdown writes the report as Markdown.
func Markdown(w io.Writer, b *Bench) error {
	ew := &errWriter{w: w}
	ew.printf("# proxybench %s\n\n", b.TestID)
	writeMDGlance(ew, firstScreen(b))
	if hl := texts(headline(b)); len(hl) > 0 {
		ew.printf("## Headline\n\n")
		for _, l := range hl {
			ew.printf("- %s\n", mdEscape(l))
		}
		ew.printf("\n")
	}
	for _, t := range sections(b) {
		writeMDTable(ew, t)
	}
	invalid, notRun := invalidList(b)
	ew.printf("## %s\n\n", invalidTitle)
	if len(invalid) == 0 {
		ew.printf("None: every run of every cell passed its checks.\n\n")
	} else {
		ew.printf("Left out of every figure above, with the reason k6's checks gave:\n\n")
		for _, l := range invalid {
			ew.printf("- %s\n", mdEscape(l.Text))
		}
		ew.printf("\n")
	}
	if len(notRun) > 0 {
		ew.printf("## %s\n\n", notRunTitle)
		for _, l := range notRun {
			ew.printf("- %s\n", mdEscape(l.Text))
		}
		ew.printf("\n")
	}
	return ew.err
}

func writeMDTable(ew *errWriter, t table) {
	ew.printf("## %s\n\n", t.Title)
	if t.Intro != "" {
		ew.printf("%s\n\n", mdEscape(t.Intro))
	}
	if len(t.Rows) == 0 {
		if t.Empty != "" {
			ew.printf("%s\n\n", mdEscape(t.Empty))
		}
		return
	}
	ew.printf("| %s |\n", strings.Join(mdCells(t.Head), " | "))
	seps := make([]string, len(t.Head))
	for i := range seps {
		seps[i] = "---"
	}
	ew.printf("|%s|\n", strings.Join(seps, "|"))
	for _, r := range t.Rows {
		cells := mdCells(r.Cells)
		for _, i := range t.Links {
			if i < len(cells) && r.Cells[i] != "—" && r.Cells[i] != "" {
				cells[i] = "[" + cells[i] + "](" + mdLink(r.Cells[i]) + ")"
			}
		}
		ew.printf("| %s |\n", strings.Join(cells, " | "))
	}
	ew.printf("\n")
	for _, c := range t.Figures {
		ew.printf("![%s](%s)\n\n", mdEscape(c.Title), mdLink(c.file()))
	}
	for _, n := range t.Notes {
		ew.printf("%s\n\n", mdEscape(n))
	}
}

func mdCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(mdEscape(c), "|", `\|`)
	}
	return out
}

// mdEscape keeps text from turning into Markdown or HTML by accident.
var mdReplacer = strings.NewReplacer("<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`")

func mdEscape(s string) string { return mdReplacer.Replace(s) }

// mdLink is a relative file name as a Markdown link target.
func mdLink(s string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "|", "%7C").Replace(s)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// The titles of the lists the first screen links to, and their anchors in report.md (GitHub's
// and most viewers': the heading in lower case, spaces as hyphens).
const (
	invalidTitle = "Invalid cells"
	notRunTitle  = "Not run"
)

func mdAnchor(title string) string { return "#" + strings.ReplaceAll(strings.ToLower(title), " ", "-") }

// writeMDGlance writes the first screen as far as Markdown goes: the valid count and the
// caveat as text, the charts as images (the SVG files Write puts beside report.md) in a table
// of one column per protocol, and each protocol's line.
func writeMDGlance(ew *errWriter, g glance) {
	ew.printf("**%s**", g.ValidText())
	if len(g.Invalid) > 0 {
		links := make([]string, 0, len(g.Invalid))
		for _, l := range g.Links() {
			links = append(links, "["+mdEscape(l.Name)+"]("+mdAnchor(invalidTitle)+")")
		}
		ew.printf(". Not valid: %s", strings.Join(links, ", "))
		if n := g.More(); n > 0 {
			ew.printf(" and [%d more](%s)", n, mdAnchor(invalidTitle))
		}
	}
	if g.NotRun > 0 {
		ew.printf(". %d not run: their target lacks the protocol ([which](%s))", g.NotRun, mdAnchor(notRunTitle))
	}
	if g.Unreadable > 0 {
		ew.printf(". %d result files could not be read ([which](%s))", g.Unreadable, mdAnchor(invalidTitle))
	}
	ew.printf(".\n\n%s\n\n", mdEscape(g.Caveat))
	if len(g.Protos) == 0 {
		return
	}
	head := make([]string, len(g.Protos))
	seps := make([]string, len(g.Protos))
	cost := make([]string, len(g.Protos))
	p99 := make([]string, len(g.Protos))
	for i, p := range g.Protos {
		head[i], seps[i] = mdEscape(p.Name), "---"
		cost[i] = mdImage(&p.Cost)
		p99[i] = "no equal-load pass"
		if p.P99 != nil {
			p99[i] = mdImage(p.P99)
		}
	}
	for _, r := range [][]string{head, seps, cost, p99} {
		ew.printf("| %s |\n", strings.Join(r, " | "))
	}
	ew.printf("\n")
	for _, p := range g.Protos {
		if p.Line != "" {
			ew.printf("- **%s**: %s\n", mdEscape(p.Name), mdEscape(p.Line))
		}
	}
	ew.printf("\n")
}

// mdImage is a first-screen chart as a Markdown image whose alt text holds its figures, for
// a viewer that shows no images.
func mdImage(m *miniChart) string {
	rows := make([]string, len(m.Rows))
	for i, r := range m.Rows {
		rows[i] = r.Target + " " + r.text()
	}
	alt := m.Title + ": " + strings.Join(rows, "; ")
	return "![" + strings.ReplaceAll(mdAltReplacer.Replace(mdEscape(alt)), "|", `\|`) + "](" + mdLink(m.file()) + ")"
}

var mdAltReplacer = strings.NewReplacer("[", "(", "]", ")")
