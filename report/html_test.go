package report

import (
	"bytes"
	"strings"
	"testing"
)

func renderHTML(t *testing.T, b *Bench) string {
	t.Helper()
	var buf bytes.Buffer
	if err := HTML(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestHTMLSelfContained(t *testing.T) {
	t.Parallel()
	page := renderHTML(t, synthBench())
	if m := external.FindAllString(page, -1); len(m) > 0 {
		t.Errorf("report.html refers to outside resources: %q", m)
	}
	for _, bad := range []string{"<script src", `rel="stylesheet"`, "<img", "<iframe", "<object", "<embed", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
	// Even the favicon is inline, so a browser asks for nothing but the page.
	if !strings.Contains(page, `<link rel="icon" href="data:,">`) {
		t.Error("no inline favicon: browsers would request /favicon.ico")
	}
}

func TestHTMLCharts(t *testing.T) {
	t.Parallel()
	page := renderHTML(t, synthBench())
	got := chartSeries(page)
	all := []string{"direct", "nginx", "caddy", "envoy"}
	for _, id := range []string{"chart-reused", "chart-fresh", "chart-latency", "chart-cpu"} {
		if strings.Join(got[id], ",") != strings.Join(all, ",") {
			t.Errorf("%s series = %v, want one per target %v", id, got[id], all)
		}
	}
	if len(got) != 4 {
		t.Errorf("charts = %v, want 4", got)
	}
	// The same tables as the Markdown: every section is there.
	for _, id := range []string{"details", "manifest", "reused", "fresh", "probes", "sse", "ws", "spread", "resources", "equal-load", "runs", "invalid"} {
		if !strings.Contains(page, `<section id="`+id+`">`) {
			t.Errorf("no section %s", id)
		}
	}
	for _, w := range []string{
		`<td class="num">10,000</td>`, `no h3`, `class="bound"`, `CLIENT-BOUND`, `class="invalid"`,
		`whiskers: min–max over runs`, `<a href="reused-h1-caddy.run3.json">`,
		`run 3 of 3: 12 of 45000 checks failed`,
		// each invalid cell's first reason is an anchor the first screen links to
		`<li id="invalid-reused-h1-h1-caddy">reused-h1 h1 caddy, run 3 of 3: 12 of 45000 checks failed`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
	// nginx has no h3: its reused h3 slot says so instead of drawing a bar.
	if !strings.Contains(page, `<text class="missing"`) {
		t.Error("a missing cell drew nothing to say so")
	}
}

func TestHTMLEscapes(t *testing.T) {
	t.Parallel()
	b := synthBench()
	evil := `<img src=x onerror=alert(1)>`
	for i := range b.Cells {
		if b.Cells[i].Target == "envoy" {
			b.Cells[i].Target = evil
		}
	}
	b.Cells[0].Runs[0].Valid = false
	b.Cells[0].Runs[0].Invalid = []string{`</td><script>alert(2)</script>`}
	b.Finish()
	page := renderHTML(t, b)
	if strings.Contains(page, "<img") || strings.Contains(page, "<script>alert") {
		t.Error("a target name or reason went into the page unescaped")
	}
	if !strings.Contains(page, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("the escaped target name is missing")
	}
}

func TestNiceStep(t *testing.T) {
	t.Parallel()
	for raw, want := range map[float64]float64{0.7: 1, 1: 1, 1.2: 2, 3: 5, 7: 10, 1234: 2000, 0.013: 0.02} {
		if got := niceStep(raw); got < want*0.999 || got > want*1.001 {
			t.Errorf("niceStep(%v) = %v, want %v", raw, got, want)
		}
	}
}
