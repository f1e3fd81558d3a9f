package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write writes report.md and report.html of b into dir.
func Write(dir string, b *Bench) error {
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
	ew.printf("%s\n\n", mdEscape(shareLine(b)))
	if hl := headline(b); len(hl) > 0 {
		for _, l := range hl {
			ew.printf("- %s\n", mdEscape(l))
		}
		ew.printf("\n")
	}
	for _, t := range sections(b) {
		writeMDTable(ew, t)
	}
	invalid, notRun := invalidList(b)
	ew.printf("## Invalid cells\n\n")
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
		ew.printf("## Not run\n\n")
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
