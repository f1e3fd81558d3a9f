package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
)

// rowsText is a chart's rows as "target value · mark" lines, in order, with "|" for a bar.
func rowsText(m *miniChart) string {
	var out []string
	for _, r := range m.Rows {
		s := r.Target
		if r.Bar {
			s += " |"
		}
		out = append(out, strings.TrimSpace(s+" "+r.text()))
	}
	return strings.Join(out, "\n")
}

func TestSortRows(t *testing.T) {
	t.Parallel()
	bar := func(target string, v float64) miniRow {
		return miniRow{Target: target, V: v, Bar: true, Baseline: target == "direct"}
	}
	mark := func(target, m, kind string) miniRow {
		return miniRow{Target: target, Mark: m, Kind: kind, Baseline: target == "direct"}
	}
	tests := []struct {
		name string
		in   []miniRow
		want string // targets in order
	}{
		{"lowest first", []miniRow{bar("a", 3), bar("b", 1), bar("c", 2)}, "b c a"},
		{"the baseline first, though dearer", []miniRow{bar("a", 3), bar("direct", 9), bar("b", 1)}, "direct b a"},
		{"equal figures keep their order", []miniRow{bar("x", 2), bar("a", 2), bar("m", 1)}, "m x a"},
		{"rows without a bar last, in their order", []miniRow{mark("z", "invalid", markInvalid), bar("b", 5), mark("a", "invalid", markInvalid), bar("c", 4)}, "c b z a"},
		{
			"without a bar: could not sustain it, invalid, not run",
			[]miniRow{mark("a", "no h3", markMuted), mark("b", "invalid", markInvalid), mark("c", "could not sustain it", markBound), mark("d", "no h3", markMuted), mark("e", "could not sustain it", markBound)},
			"c e b a d",
		},
		{"the baseline first without a bar too", []miniRow{bar("b", 5), mark("direct", "invalid", markInvalid)}, "direct b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, r := range sortRows(tt.in) {
				got = append(got, r.Target)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("order %v, want %s", got, tt.want)
			}
		})
	}
}

// reusedCell adds to b one reused cell over h2 with its runs (valid or not) and resources.
func reusedCell(b *Bench, target string, cpu float64, valid []bool, bound, outside bool) {
	for i, v := range valid {
		res := &sample.Resources{TargetCPUPerReqMicros: cpu, ClientBound: bound, OutsideLoad: outside}
		if cpu == 0 {
			res = nil
		}
		rps := 1000.0
		r := &result.Result{
			Schema: 1, Scenario: "reused-h2", Target: target, Proto: "h2", Mode: "reused", RPS: &rps,
			Latency: result.Stats{P50: 1, P99: 2}, Valid: v,
		}
		if !v {
			r.Invalid = []string{"3 of 900 checks failed"}
		}
		b.Add(fmt.Sprintf("reused-h2-%s.run%d.json", target, i+1), r, res)
	}
}

func TestCostChart(t *testing.T) {
	t.Parallel()
	b := New("t", "smoke", nil)
	reusedCell(b, "direct", 30, []bool{true}, true, false)
	reusedCell(b, "nginx", 45, []bool{true}, false, false)
	reusedCell(b, "caddy", 20, []bool{true, false}, false, false) // cheapest, but one run of two failed
	reusedCell(b, "envoy", 0, []bool{true}, false, false)         // rebuilt: no resources
	reusedCell(b, "haproxy", 41, []bool{true}, false, true)
	b.Add("reused-h2-traefik.json", &result.Result{Schema: 1, Scenario: "reused-h2", Target: "traefik", Proto: "h2", Mode: "reused", Skipped: "no h2"}, nil)
	b.Finish()
	m := costChart(b, "h2")
	want := strings.Join([]string{
		"direct | 30 µs (baseline) · client-bound",
		"haproxy | 41 µs · outside load",
		"nginx | 45 µs",
		"caddy invalid",
		"envoy not sampled",
		"traefik no h2",
	}, "\n")
	if got := rowsText(&m); got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	kinds := map[string]string{"direct": markBound, "haproxy": markBound, "nginx": "", "caddy": markInvalid, "envoy": markMuted, "traefik": markMuted}
	for _, r := range m.Rows {
		if r.Kind != kinds[r.Target] {
			t.Errorf("%s: kind %q, want %q", r.Target, r.Kind, kinds[r.Target])
		}
		if wantLink := r.Target == "caddy"; (r.Link != "") != wantLink {
			t.Errorf("%s: link %q", r.Target, r.Link)
		}
	}
	// the link goes to the reason's anchor in the list of invalid cells
	invalid, _ := invalidList(b)
	if m.Rows[3].Link != "#"+invalid[0].ID || !strings.Contains(invalid[0].Text, "3 of 900 checks failed") {
		t.Errorf("caddy links to %q; the first invalid item is %+v", m.Rows[3].Link, invalid[0])
	}
}

func TestP99Chart(t *testing.T) {
	t.Parallel()
	// p99 per run: -1 a run that could not sustain the rate, -2 an invalid run
	tests := []struct {
		name     string
		runs     map[string][]float64
		lag      float64
		want     string
		note     bool
		line     string
		overload []string
	}{
		{
			name: "sorted, the baseline first",
			runs: map[string][]float64{"direct": {2}, "nginx": {5}, "caddy": {3}},
			want: "direct | 2.00 ms (baseline)\ncaddy | 3.00 ms\nnginx | 5.00 ms",
			line: "Every target sustained 2,000 req/s.",
		},
		{
			name: "could not sustain it, in every run or in some",
			runs: map[string][]float64{"direct": {2, 2}, "nginx": {3, 3.5}, "caddy": {-1, -1}, "h2o": {4, -1}},
			want: "direct | 2.00 ms (baseline)\nnginx | 3.25 ms\nh2o | 4.00 ms · not sustained in 1 of 2 runs\ncaddy could not sustain it",
			line: "Could not sustain 2,000 req/s: caddy, h2o (in 1 of 2 runs).",
		},
		{
			name: "invalid runs",
			runs: map[string][]float64{"direct": {2}, "nginx": {-2}, "caddy": {3, -2}},
			want: "direct | 2.00 ms (baseline)\ncaddy | 3.00 ms · 1 of 2 runs invalid\nnginx invalid",
			line: "Every target sustained 2,000 req/s.",
		},
		{
			name: "within the client's lateness",
			runs: map[string][]float64{"direct": {1}, "nginx": {3.2}, "h2o": {3.6}, "caddy": {9}},
			lag:  1,
			want: "direct | 1.00 ms (baseline)\nnginx | 3.20 ms\nh2o | ≈ 3.60 ms\ncaddy | 9.00 ms",
			line: "Every target sustained 2,000 req/s.",
		},
		{
			name: "the client could not hold the rate",
			runs: map[string][]float64{"direct": {-1}, "nginx": {-1}, "caddy": {3}},
			want: "direct not judged\nnginx not judged\ncaddy not judged",
			note: true,
			line: "The client could not hold 2,000 req/s: no target ranked.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := New("t", "smoke", nil)
			for _, target := range []string{"direct", "nginx", "caddy", "h2o"} {
				for i, p := range tt.runs[target] {
					e := EqualLoadCell{Target: target, Proto: "h1c", RateRPS: 2000, P99: p, StartLagP99: tt.lag, Valid: true, Run: i + 1}
					switch p {
					case -1:
						e.P99, e.Overload = 40, "could not sustain 2000 req/s"
					case -2:
						e.P99, e.Valid, e.Invalid = 1, false, []string{"1 of 20000 checks failed"}
					}
					b.AddEqualLoad(e)
				}
			}
			b.Finish()
			m, sum := p99Chart(b, "h1c")
			if m == nil {
				t.Fatal("no chart")
			}
			if got := rowsText(m); got != tt.want {
				t.Errorf("rows:\n%s\nwant:\n%s", got, tt.want)
			}
			if (m.Note != "") != tt.note {
				t.Errorf("note %q", m.Note)
			}
			gp := glanceProto{P99: m, Equal: sum}
			if got := glanceLine(&gp); got != tt.line {
				t.Errorf("line %q, want %q", got, tt.line)
			}
		})
	}
}

func TestGlanceLine(t *testing.T) {
	t.Parallel()
	cost := func(cpu ...float64) miniChart {
		rows := []miniRow{{Target: "direct", V: 10, Bar: true, Value: "10 µs", Baseline: true}}
		for i, v := range cpu {
			rows = append(rows, miniRow{Target: fmt.Sprintf("p%d", i+1), V: v, Bar: true, Value: fmt.Sprintf("%.0f µs", v)})
		}
		rows = append(rows, miniRow{Target: "bad", Mark: "invalid"})
		return miniChart{Rows: sortRows(rows)}
	}
	tests := []struct {
		name string
		cost miniChart
		want string
	}{
		{"one proxy", cost(40), "CPU per request: p1 40 µs."},
		{"three", cost(50, 40, 45), "Cheapest: p2 40 µs, p3 45 µs, p1 50 µs."},
		{"more than three", cost(50, 40, 45, 60, 41), "Cheapest of 5: p2 40 µs, p5 41 µs, p3 45 µs."},
		{"only the baseline", cost(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gp := glanceProto{Cost: tt.cost}
			if got := glanceLine(&gp); got != tt.want {
				t.Errorf("line %q, want %q", got, tt.want)
			}
		})
	}
}

// TestGlanceValid counts the cells that ran (equal load's per target and protocol), names the
// invalid ones with their anchors, and counts those not run apart.
func TestGlanceValid(t *testing.T) {
	t.Parallel()
	g := firstScreen(synthBench())
	// synth: 4 targets × (reused h1, h2, h3 + fresh h1, h2 + 4 probes × 2 + ws) = 56 cells,
	// nginx's reused h3 not run; caddy's reused h1 (one run of 3) and envoy's fresh h2
	// invalid; equal load over h1: 4 cells, valid (caddy's could not sustain it: a result).
	if g.ValidText() != "57 of 59 cells valid" || g.NotRun != 1 {
		t.Errorf("%s, %d not run; want 57 of 59, 1 not run", g.ValidText(), g.NotRun)
	}
	want := []glanceLink{{"reused-h1 caddy", "invalid-reused-h1-h1-caddy"}, {"fresh-h2 envoy", "invalid-fresh-h2-h2-envoy"}}
	if fmt.Sprint(g.Invalid) != fmt.Sprint(want) {
		t.Errorf("invalid %v, want %v", g.Invalid, want)
	}
	page := renderHTML(t, synthBench())
	for _, l := range want {
		if !strings.Contains(page, `<a href="#`+l.ID+`">`+l.Name+`</a>`) || !strings.Contains(page, `<li id="`+l.ID+`">`) {
			t.Errorf("%s: no link to its reason, or no reason with id %s", l.Name, l.ID)
		}
	}
	for _, p := range []string{"h1", "h2", "h3"} {
		if !strings.Contains(page, `<section class="proto" data-proto="`+p+`">`) {
			t.Errorf("no first-screen column for %s", p)
		}
	}

	// past maxLinks, the rest are counted
	b := synthBench()
	for i, n := 0, 0; n < 10; i++ {
		if c := &b.Cells[i]; len(c.Runs) > 0 {
			c.Runs[0].Valid, c.Runs[0].Invalid = false, []string{"failed"}
			n++
		}
	}
	b.Finish()
	g = firstScreen(b)
	if len(g.Links()) != maxLinks || g.More() != len(g.Invalid)-maxLinks || g.More() == 0 {
		t.Errorf("%d invalid: %d links and %d more", len(g.Invalid), len(g.Links()), g.More())
	}
}

func TestCaveat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		bound []string
		want  string
	}{
		{"none", nil, " No cell was client-bound."},
		{"named", []string{"direct", "nginx"}, " Client-bound (the req/s is k6's ceiling, not the target's): reused-h2 direct, reused-h2 nginx."},
		{"counted", []string{"direct", "nginx", "caddy", "envoy"}, " 4 cells client-bound (the req/s is k6's ceiling, not the target's), marked in the charts and tables."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := New("t", "smoke", map[string]any{"cpus": float64(2), "pinning": "none"})
			for _, target := range []string{"direct", "nginx", "caddy", "envoy", "h2o"} {
				reusedCell(b, target, 30, []bool{true}, strings.Contains(strings.Join(tt.bound, " "), target), false)
			}
			b.Finish()
			if got := caveat(b); got != shareLine(b)+tt.want {
				t.Errorf("caveat %q, want the share line and %q", got, tt.want)
			}
		})
	}
}

// TestGlanceFiles: report.md shows the first screen's charts as the SVG files Write puts
// beside it, each a well-formed SVG of its own; report.html has them inline, without a
// namespace URL.
func TestGlanceFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := synthBench()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	charts := firstScreen(b).charts()
	if len(charts) != 4 { // cost over h1, h2, h3; p99 over h1, the one equal-load pass
		t.Errorf("%d first-screen charts, want 4", len(charts))
	}
	for _, m := range charts {
		data, err := os.ReadFile(filepath.Join(dir, m.file()))
		if err != nil {
			t.Fatal(err)
		}
		var svg struct {
			XMLName xml.Name
			Rows    int `xml:"data-rows,attr"`
		}
		if err := xml.Unmarshal(data, &svg); err != nil || svg.XMLName.Local != "svg" || svg.XMLName.Space != "http://www.w3.org/2000/svg" || svg.Rows != len(m.Rows) {
			t.Errorf("%s: %v, %+v", m.file(), err, svg)
		}
		if bytes.Contains(data, []byte("<a ")) {
			t.Errorf("%s: a link in a file shown as an image", m.file())
		}
		if !bytes.Contains(md, []byte("]("+m.file()+")")) {
			t.Errorf("report.md does not show %s", m.file())
		}
		if !bytes.Contains(page, []byte(`<svg class="mini" id="`+m.ID+`"`)) {
			t.Errorf("report.html does not hold %s inline", m.ID)
		}
	}
	for _, want := range []string{
		"**57 of 59 cells valid**. Not valid: [reused-h1 caddy](#invalid-cells), [fresh-h2 envoy](#invalid-cells). 1 not run",
		"| HTTP/1.1 TLS | HTTP/2 TLS | HTTP/3 QUIC |",
		"- **HTTP/1.1 TLS**: Cheapest: nginx 50 µs, envoy 50 µs. Could not sustain 2,000 req/s: caddy.",
		"\n## Headline\n\n- Target CPU per request, reused HTTP/1.1 TLS: nginx 50 µs; envoy 50 µs; direct 60 µs\n",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// The share line reads the pinning as engine/manifest.go writes it.
func TestShareLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ pinning, want string }{
		{"none: client, proxies and upstream share 2 CPUs", "Client, proxies and upstream share 2 CPUs (no pinning)"},
		{"none", "Client, proxies and upstream share 2 CPUs (no pinning)"},
		{"client=0, proxy=1", "Client, proxies and upstream run on 2 CPUs, pinned: client=0, proxy=1."},
	} {
		b := New("t", "smoke", map[string]any{"cpus": float64(2), "pinning": tt.pinning})
		if got := shareLine(b); !strings.HasPrefix(got, tt.want) {
			t.Errorf("pinning %q: %q, want it to start %q", tt.pinning, got, tt.want)
		}
	}
}

func TestMiniChartNoteWraps(t *testing.T) {
	short := &miniChart{ID: "c", Title: "t", Rows: []miniRow{{Target: "direct", V: 1, Bar: true}}, Note: "the client could not hold it"}
	long := *short
	long.Note = "direct could not sustain it: the client could not hold the rate, so no target is ranked at it"
	if n := len(short.noteLines()); n != 1 {
		t.Errorf("a short note in %d lines, want 1", n)
	}
	lines := long.noteLines()
	if len(lines) < 2 || strings.Join(lines, " ") != long.Note {
		t.Fatalf("the long note's lines %q: want it whole, on 2 or more", lines)
	}
	for _, l := range lines {
		if textW(l) > miniW {
			t.Errorf("line %q is %.0f wide, the chart %.0f", l, textW(l), miniW)
		}
	}
	svg := long.svg(map[string]string{"direct": "#000"}, true)
	if got := strings.Count(svg, `class="note"`); got != len(lines) {
		t.Errorf("svg draws %d note lines, want %d", got, len(lines))
	}
	if long.height() != short.height()+miniNoteH*float64(len(lines)-1) {
		t.Errorf("height %v with %d lines, %v with one: want a line's %v more each", long.height(), len(lines), short.height(), miniNoteH)
	}
}
