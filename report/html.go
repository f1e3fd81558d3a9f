package report

import (
	"html/template"
	"io"
	"regexp"
	"slices"
)

// HTML writes the report as one self-contained page: inline style, inline SVG charts, no
// request for anything else (not even a favicon). The small inline script only measures the
// drawn charts into data- attributes, for the browser test and for anyone inspecting the page.
func HTML(w io.Writer, b *Bench) error {
	col := colors(b.Targets())
	byID := map[string]template.HTML{}
	for _, c := range charts(b) {
		// svg() escapes every text it writes: it is HTML we built, not HTML we were given.
		byID[c.ID] = template.HTML(c.svg(col)) //nolint:gosec // built and escaped in svg.go
	}
	after := map[string][]string{
		"reused":    {"chart-reused", "chart-latency"},
		"fresh":     {"chart-fresh"},
		"resources": {"chart-cpu"},
	}

	var secs []htmlSection
	for _, t := range sections(b) {
		s := htmlSection{Table: t}
		for _, id := range after[t.ID] {
			if svg, ok := byID[id]; ok {
				s.Charts = append(s.Charts, svg)
			}
		}
		for _, c := range t.Figures {
			s.Charts = append(s.Charts, template.HTML(c.svg(col, false))) //nolint:gosec // built and escaped in curve.go
		}
		for _, r := range t.Rows {
			hr := htmlRow{Class: r.Class}
			for i, c := range r.Cells {
				hc := htmlCell{Text: c, Num: !t.KV && numeric.MatchString(c)}
				if slices.Contains(t.Links, i) && c != "—" && c != "" {
					hc.Link = c
				}
				hr.Cells = append(hr.Cells, hc)
			}
			s.Rows = append(s.Rows, hr)
		}
		secs = append(secs, s)
	}
	g := firstScreen(b)
	glanceCharts := map[string]template.HTML{}
	for _, m := range g.charts() {
		glanceCharts[m.ID] = template.HTML(m.svg(col, false)) //nolint:gosec // built and escaped in minichart.go
	}
	invalid, notRun := invalidList(b)
	return page.Execute(w, htmlData{
		TestID: b.TestID, Glance: g, GlanceCharts: glanceCharts, Headline: texts(headline(b)), Sections: secs,
		Invalid: invalid, NotRun: notRun, Targets: b.Targets(),
	})
}

var numeric = regexp.MustCompile(`^(—|n=1|[-~]?[0-9][0-9,.]*(%|k)?( / [0-9]+)?|[0-9]+/[0-9]+)$`)

type htmlData struct {
	TestID       string
	Glance       glance
	GlanceCharts map[string]template.HTML // by chart id
	Headline     []string
	Sections     []htmlSection
	Invalid      []listItem
	NotRun       []listItem
	Targets      []string
}

type htmlSection struct {
	Table  table
	Rows   []htmlRow
	Charts []template.HTML
}

type htmlRow struct {
	Class string
	Cells []htmlCell
}

type htmlCell struct {
	Text string
	Link string
	Num  bool
}

var page = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>proxybench {{.TestID}}</title>
<style>
:root { --fg: #1f2933; --muted: #52606d; --line: #d9e2ec; --bg: #ffffff; --head: #f0f4f8; --bad: #b42318; --badbg: #fef3f2; --warn: #b54708; --warnbg: #fffaeb; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1336px; margin: 0 auto; }
h1 { font-size: 24px; margin: 0 0 6px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
p { margin: 6px 0 10px; max-width: 960px; }
header.glance h1 { font-size: 22px; margin: 0 0 4px; }
p.validity { margin: 0 0 2px; max-width: none; }
p.caveat { margin: 0 0 8px; max-width: none; color: var(--muted); font-size: 13px; }
.protos { display: grid; grid-template-columns: repeat(auto-fill, minmax(270px, 1fr)); gap: 8px 20px; }
.proto h2 { font-size: 16px; margin: 6px 0 6px; padding-bottom: 2px; }
.proto figure { margin: 0 0 6px; }
svg.mini { width: 100%; max-width: 400px; height: auto; display: block; }
svg.mini a { cursor: pointer; }
p.line { font-size: 13px; margin: 2px 0 0; }
ul.headline { margin: 8px 0 0; padding-left: 20px; }
nav { margin: 12px 0 0; font-size: 13px; }
nav a { margin-right: 12px; color: #1d4ed8; text-decoration: none; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 8px; font-size: 13px; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv td { white-space: normal; max-width: 760px; }
table.kv td:first-child { white-space: nowrap; color: var(--muted); }
tr.invalid td { color: var(--bad); background: var(--badbg); }
tr.noproto td { color: var(--muted); font-style: italic; }
tr.bound td { background: var(--warnbg); color: var(--warn); font-weight: 600; }
tr.baseline td { background: #f8fafc; }
.note { color: var(--muted); font-size: 13px; }
figure { margin: 12px 0 20px; }
svg.chart { width: 100%; max-width: 960px; height: auto; display: block; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
svg.chart text { font-family: "DejaVu Sans", Arial, sans-serif; font-size: 12px; fill: var(--fg); }
svg.chart text.title { font-size: 15px; font-weight: 600; }
svg.chart text.label { fill: var(--muted); }
svg.chart text.tick { fill: var(--muted); font-size: 11.5px; }
svg.chart text.note { fill: var(--muted); font-style: italic; }
svg.chart text.missing { fill: var(--muted); font-size: 10px; }
svg.chart text.value { fill: var(--fg); font-size: 10.5px; }
svg.chart .grid { stroke: #eef2f6; }
svg.chart .axisline { stroke: #9aa5b1; }
svg.chart .whisker { stroke: var(--fg); stroke-width: 1.2; fill: none; }
ul.invalid li { color: var(--bad); }
details { margin-top: 8px; }
summary { cursor: pointer; color: var(--muted); }
</style>
</head>
<body>
<main>
<header class="glance" id="glance">
<h1>proxybench {{.TestID}}</h1>
{{with .Glance}}<p class="validity"><strong>{{.ValidText}}</strong>
{{- if .Invalid}}. Not valid: {{range $i, $l := .Links}}{{if $i}}, {{end}}<a href="#{{$l.ID}}">{{$l.Name}}</a>{{end}}{{with .More}} and <a href="#invalid">{{.}} more</a>{{end}}{{end}}
{{- if .NotRun}}. {{.NotRun}} not run: their target lacks the protocol (<a href="#notrun">which</a>){{end}}
{{- if .Unreadable}}. {{.Unreadable}} result files could not be read (<a href="#invalid">which</a>){{end}}.</p>
<p class="caveat">{{.Caveat}}</p>
<div class="protos">
{{range .Protos}}<section class="proto" data-proto="{{.Proto}}"><h2>{{.Name}}</h2>
<figure>{{index $.GlanceCharts .Cost.ID}}</figure>
{{if .P99}}<figure>{{index $.GlanceCharts .P99.ID}}</figure>{{else}}<p class="note">No equal-load pass over {{.Name}}.</p>{{end}}
{{with .Line}}<p class="line">{{.}}</p>{{end}}
</section>
{{end}}</div>{{end}}
</header>
<nav><a href="#headline">Headline</a>{{range .Sections}}<a href="#{{.Table.ID}}">{{.Table.Title}}</a>{{end}}<a href="#invalid">Invalid cells</a></nav>
{{if .Headline}}<section id="headline">
<h2>Headline</h2>
<ul class="headline">{{range .Headline}}<li>{{.}}</li>{{end}}</ul>
</section>{{end}}
{{range .Sections}}
<section id="{{.Table.ID}}">
<h2>{{.Table.Title}}</h2>
{{with .Table.Intro}}<p class="note">{{.}}</p>{{end}}
{{if .Rows}}{{if eq .Table.ID "runs"}}<details><summary>{{len .Rows}} runs</summary>{{end}}
<div class="scroll"><table{{if .Table.KV}} class="kv"{{end}}>
<thead><tr>{{range .Table.Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr{{with .Class}} class="{{.}}"{{end}}>{{range .Cells}}<td{{if .Num}} class="num"{{end}}>{{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{if eq .Table.ID "runs"}}</details>{{end}}
{{range .Table.Notes}}<p class="note">{{.}}</p>{{end}}
{{else}}<p class="note">{{.Table.Empty}}</p>{{end}}
{{range .Charts}}<figure>{{.}}</figure>
{{end}}
</section>
{{end}}
<section id="invalid">
<h2>Invalid cells</h2>
{{if .Invalid}}<p class="note">Left out of every figure above, with the reason k6's checks gave:</p>
<ul class="invalid">{{range .Invalid}}<li{{with .ID}} id="{{.}}"{{end}}>{{.Text}}</li>{{end}}</ul>
{{else}}<p>None: every run of every cell passed its checks.</p>{{end}}
{{if .NotRun}}<h2 id="notrun">Not run</h2><ul>{{range .NotRun}}<li>{{.Text}}</li>{{end}}</ul>{{end}}
</section>
</main>
<script>
// Measures what the browser drew, once the page has loaded: each chart's size, each series'
// bounding box, and how many resources the page fetched besides itself (none, by design).
window.addEventListener('load', function () {
  var charts = document.querySelectorAll('svg.chart');
  charts.forEach(function (svg) {
    var r = svg.getBoundingClientRect();
    svg.setAttribute('data-drawn', Math.round(r.width) + 'x' + Math.round(r.height));
    svg.querySelectorAll('g.series').forEach(function (g) {
      var b = g.getBBox();
      g.setAttribute('data-bbox', Math.round(b.width) + 'x' + Math.round(b.height));
      g.setAttribute('data-bars', g.querySelectorAll('rect.bar').length);
    });
  });
  document.documentElement.setAttribute('data-charts-drawn', charts.length);
  // The first screen: where its charts end, and whether anything is wider than the window.
  document.querySelectorAll('svg.mini').forEach(function (svg) {
    var r = svg.getBoundingClientRect();
    svg.setAttribute('data-drawn', Math.round(r.width) + 'x' + Math.round(r.height));
    svg.setAttribute('data-bottom', Math.round(r.bottom + window.scrollY));
  });
  var wide = 0;
  document.querySelectorAll('.scroll').forEach(function (box) {
    if (box.getBoundingClientRect().right > document.documentElement.clientWidth) { wide++; }
  });
  var root = document.documentElement;
  root.setAttribute('data-viewport', window.innerWidth + 'x' + window.innerHeight);
  root.setAttribute('data-scroll-width', root.scrollWidth + '/' + root.clientWidth);
  root.setAttribute('data-boxes-wider', wide);
  document.documentElement.setAttribute('data-resources-fetched', performance.getEntriesByType('resource').length);
  document.documentElement.setAttribute('data-page-height', document.documentElement.scrollHeight);
});
</script>
</body>
</html>
`))
