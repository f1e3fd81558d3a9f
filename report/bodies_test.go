package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
)

// sweepBench is a bench of the body-size sweep alone, with known inputs: direct, nginx and
// pingora (no h3); downloads and uploads of 0 B, 1 KiB and 1 MiB over h1c and h3. MB/s is req/s
// × the size; nginx's 1 MiB download over h1c is invalid (cut short); the target's CPU is 2 ms
// per request at every size, so its CPU per MB falls as the size grows.
func sweepBench(t *testing.T) *Bench {
	t.Helper()
	b := New("sweep-1", "smoke", map[string]any{"cpus": float64(2), "pinning": "none"})
	rps := map[string]float64{"direct": 4000, "nginx": 3000, "pingora": 2000}
	for _, dir := range []struct{ scenario, direction, route string }{{"bodies-down", result.Download, "/bytes"}, {"bodies-up", result.Upload, "/upload"}} {
		for _, proto := range []string{"h1c", "h3"} {
			for _, n := range []int{0, result.KiB, result.MiB} {
				for _, target := range []string{"direct", "nginx", "pingora"} {
					body := &result.Body{Direction: dir.direction, Bytes: float64(n)}
					r := &result.Result{
						Schema: 1, TestID: "sweep-1", Scenario: dir.scenario, Target: target, Proto: proto, Mode: BodiesMode, Route: dir.route,
						Profile: "smoke", Body: body, Valid: true, Invalid: []string{},
					}
					file := fmt.Sprintf("%s-%s-%s-%s.json", dir.scenario, proto, result.SizeLabel(n), target)
					if target == "pingora" && proto == "h3" {
						r.Skipped, r.SkipReason, r.Valid = "no h3", "pingora does not serve h3 (it serves h1, h1c, h2)", false
						b.Add(file, r, nil)
						continue
					}
					// req/s falls with the size: a 1 MiB body takes a tenth of the rate
					v := rps[target] / (1 + float64(n)/float64(result.MiB)*9)
					mb := result.Round(v*float64(n)/1e6, 3)
					r.RPS, body.MBPerS, r.DurationS, r.Requests = &v, &mb, 10, v*10
					r.Latency = result.Stats{P50: 2, P99: 8}
					if target == "nginx" && proto == "h1c" && n == result.MiB && dir.direction == result.Download {
						r.Valid, r.Invalid = false, []string{"body cut short in 300 responses: each ended before its 1048576 bytes"}
					}
					// sampled: 2 ms of target CPU per request, every request k6 sent (10 s and 3 s of warm-up)
					reqs := v * 13
					res := &sample.Resources{TargetCPUSeconds: reqs * 0.002, RSSPeakMB: 12}
					res.PerRequest(reqs)
					b.Add(file, r, res)
				}
			}
		}
	}
	b.Finish()
	return b
}

// The sweep's grids: per direction MB/s, req/s and CPU per MB, a row per protocol and target, a
// column per size (MB/s and CPU from 1 KiB: 0 B moves none); an invalid point and a target
// without the protocol say so where the figure would be.
func TestBodiesTables(t *testing.T) {
	t.Parallel()
	b := sweepBench(t)
	tables := map[string]table{}
	for _, tb := range bodiesTables(b) {
		tables[tb.ID] = tb
	}
	if len(tables) != 6 {
		t.Fatalf("tables %v, want 6: MB/s, req/s and CPU per MB for downloads and uploads", keys(tables))
	}
	rowOf := func(id, proto, target string) []string {
		for _, r := range tables[id].Rows {
			if r.Cells[0] == protoName(proto) && r.Cells[1] == target {
				return r.Cells
			}
		}
		t.Fatalf("%s: no row %s %s in %v", id, proto, target, tables[id].Rows)
		return nil
	}
	for _, tc := range []struct {
		id, proto, target string
		head, cells       []string
	}{
		// direct h1c: 4000 req/s at 0 B, 3965.2 at 1 KiB (4.060 MB/s), 400 at 1 MiB (419.43 MB/s)
		{"bodies-download", "h1c", "direct", []string{"protocol", "target", "1KiB", "1MiB"}, []string{"HTTP/1.1 cleartext", "direct", "4.06", "419"}},
		{"bodies-download-rps", "h1c", "direct", []string{"protocol", "target", "0B", "1KiB", "1MiB"}, []string{"HTTP/1.1 cleartext", "direct", "4,000", "3,965", "400"}},
		// 2 ms a request: 2 / 0.001024 MB = 1953 ms per MB at 1 KiB, 2 / 1.048576 = 1.91 at 1 MiB
		{"bodies-download-cpu", "h1c", "direct", []string{"protocol", "target", "1KiB", "1MiB"}, []string{"HTTP/1.1 cleartext", "direct", "1,953", "1.91"}},
		{"bodies-download", "h1c", "nginx", nil, []string{"HTTP/1.1 cleartext", "nginx", "3.04", "invalid"}},
		{"bodies-upload", "h1c", "nginx", nil, []string{"HTTP/1.1 cleartext", "nginx", "3.04", "315"}},
		{"bodies-upload-rps", "h3", "pingora", nil, []string{"HTTP/3 QUIC", "pingora", "no h3", "no h3", "no h3"}},
	} {
		if tc.head != nil && strings.Join(tables[tc.id].Head, "|") != strings.Join(tc.head, "|") {
			t.Errorf("%s: head %v, want %v", tc.id, tables[tc.id].Head, tc.head)
		}
		if got := rowOf(tc.id, tc.proto, tc.target); strings.Join(got, "|") != strings.Join(tc.cells, "|") {
			t.Errorf("%s %s %s: %v, want %v", tc.id, tc.proto, tc.target, got, tc.cells)
		}
	}
	// the same figures in report.md and on the console
	var md, text bytes.Buffer
	if err := Markdown(&md, b); err != nil {
		t.Fatal(err)
	}
	if err := Text(&text, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Body sizes, download: MB/s", "| HTTP/1.1 cleartext | direct | 4.06 | 419 |", "## Body sizes, upload: target CPU ms per MB"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if !regexp.MustCompile(`== Body sizes, download: MB/s  \(testid sweep-1, one run a point\)\n.*\n\s+HTTP/1.1 cleartext\s+direct\s+4.06\s+419`).MatchString(text.String()) {
		t.Errorf("the console lacks the download MB/s grid:\n%s", text.String())
	}
}

func keys[V any](m map[string]V) []string { return sortedKeys(m) }

// The points count as cells on the first screen (a no h3 one as not run, once per size); an
// invalid one is listed with its reason and its file, and the first screen links to it.
func TestBodiesValidity(t *testing.T) {
	t.Parallel()
	b := sweepBench(t)
	g := firstScreen(b)
	// 2 directions × (3 targets × 3 sizes over h1c + 2 × 3 over h3), 1 invalid; pingora's 6 h3 not run
	if g.Cells != 30 || g.Valid != 29 || g.NotRun != 6 {
		t.Errorf("first screen: %d of %d cells valid, %d not run; want 29 of 30, 6", g.Valid, g.Cells, g.NotRun)
	}
	if len(g.Invalid) != 1 || g.Invalid[0].Name != "bodies-down h1c 1MiB nginx" || g.Invalid[0].ID != "invalid-bodies-down-1MiB-h1c-nginx" {
		t.Errorf("first screen's invalid links %+v, want the one cut short", g.Invalid)
	}
	invalid, notRun := invalidList(b)
	want := "bodies-down h1c 1MiB nginx: body cut short in 300 responses: each ended before its 1048576 bytes (it measured 315 MB/s: not counted); bodies-down-h1c-1MiB-nginx.json"
	if len(invalid) != 1 || invalid[0].Text != want || invalid[0].ID != g.Invalid[0].ID {
		t.Errorf("invalid list %+v, want %q", invalid, want)
	}
	if len(notRun) != 2 || !strings.HasPrefix(notRun[0].Text, "bodies-down h3 pingora: no h3 (") || !strings.HasPrefix(notRun[1].Text, "bodies-up h3 pingora: no h3 (") {
		t.Errorf("not run %+v, want pingora's h3 once per direction", notRun)
	}
}

// The curves, under each direction's MB/s grid: one per protocol, one line per target that has
// the protocol, a point per size above 0 on a log axis (x grows with the size, y with MB/s), the
// invalid point hollow on the axis with no line through it; inline in report.html, beside
// report.md as files it shows.
func TestBodiesCurves(t *testing.T) {
	t.Parallel()
	b := sweepBench(t)
	figs := map[string][]curve{}
	for _, tb := range bodiesTables(b) {
		if len(tb.Figures) > 0 {
			figs[tb.ID] = tb.Figures
		}
	}
	if len(figs) != 2 || len(figs["bodies-download"]) != 2 || len(figs["bodies-upload"]) != 2 {
		t.Fatalf("curves %v, want two (h1c, h3) under each direction's MB/s grid", keys(figs))
	}
	col := colors(b.Targets())
	lines := regexp.MustCompile(`(?s)<g class="series" data-target="([^"]+)">(.*?)</g>`)
	point := regexp.MustCompile(`<circle class="point" cx="([0-9.]+)" cy="([0-9.]+)"`)
	for _, tc := range []struct {
		curve   int
		id      string
		targets string
	}{
		{0, "curve-bodies-download-h1c", "direct,nginx,pingora"},
		{1, "curve-bodies-download-h3", "direct,nginx"}, // pingora: no h3, no line
	} {
		c := figs["bodies-download"][tc.curve]
		svg := c.svg(col, true)
		if err := xmlWellFormed(svg); err != nil {
			t.Errorf("%s is no well-formed SVG: %v", c.ID, err)
		}
		var targets []string
		for _, l := range lines.FindAllStringSubmatch(svg, -1) {
			targets = append(targets, l[1])
			var xs, ys []float64
			for _, p := range point.FindAllStringSubmatch(l[2], -1) {
				x, _ := strconv.ParseFloat(p[1], 64)
				y, _ := strconv.ParseFloat(p[2], 64)
				xs, ys = append(xs, x), append(ys, y)
			}
			gaps, polylines := strings.Count(l[2], `class="gap"`), strings.Count(l[2], "<polyline")
			if l[1] == "nginx" && c.ID == "curve-bodies-download-h1c" {
				// its 1 MiB download was cut short: a gap, and no line from its 1 KiB point
				if len(xs) != 1 || gaps != 1 || polylines != 0 {
					t.Errorf("%s nginx: %d points, %d gaps, %d lines; want 1, 1, 0", c.ID, len(xs), gaps, polylines)
				}
				continue
			}
			// 1 KiB then 1 MiB, left to right, the 1 MiB one higher up (more MB/s)
			if len(xs) != 2 || !(xs[0] < xs[1]) || !(ys[1] < ys[0]) || gaps != 0 || polylines != 1 {
				t.Errorf("%s %s: points %v, %v, %d gaps, %d lines; want 2 rising left to right, one line", c.ID, l[1], xs, ys, gaps, polylines)
			}
		}
		if c.ID != tc.id || strings.Join(targets, ",") != tc.targets {
			t.Errorf("curve %s: lines %v, want %s: %s", c.ID, targets, tc.id, tc.targets)
		}
	}
	if svg := figs["bodies-download"][0].svg(col, false); !strings.Contains(svg, "<title>direct HTTP/1.1 cleartext 1MiB: 419 MB/s, 400 req/s, target CPU 1.91 ms/MB</title>") {
		t.Errorf("direct's 1 MiB point has no tooltip with its figures:\n%s", svg)
	}

	dir := t.TempDir()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if got := chartSeries(string(page))["curve-bodies-upload-h3"]; strings.Join(got, ",") != "direct,nginx" {
		t.Errorf("report.html's upload h3 curve: lines %v", got)
	}
	if m := external.FindAllString(string(page), -1); len(m) > 0 {
		t.Errorf("report.html refers to outside resources: %q", m)
	}
	for _, id := range []string{"curve-bodies-download-h1c", "curve-bodies-download-h3", "curve-bodies-upload-h1c", "curve-bodies-upload-h3"} {
		file := id + ".svg"
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !bytes.HasPrefix(data, []byte(`<svg xmlns="http://www.w3.org/2000/svg" class="curve"`)) {
			t.Errorf("%s beside report.md: %v, %.60s", file, err, data)
		}
		if !strings.Contains(string(md), "]("+file+")") {
			t.Errorf("report.md does not show %s", file)
		}
	}
	if err := Check(b); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// Check holds the sweep's points to the report: a point whose row is missing from the table
// of every run, or whose MB/s is not in its grid, fails it.
func TestCheckBodies(t *testing.T) {
	t.Parallel()
	b := sweepBench(t)
	var md strings.Builder
	if err := Markdown(&md, b); err != nil {
		t.Fatal(err)
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	for _, c := range b.Bodies {
		checkBodyPoint(md.String(), &c, fail)
	}
	if len(errs) > 0 {
		t.Fatalf("the report as written fails: %v", errs)
	}
	i := slices.IndexFunc(b.Bodies, func(c BodyCell) bool {
		return c.Direction == result.Download && c.Proto == "h1c" && c.Target == "direct" && c.Bytes == result.KiB
	})
	c := b.Bodies[i]
	other, file := 9.99, "elsewhere.json"
	c.MBPerS = &other
	checkBodyPoint(md.String(), &c, fail)
	c = b.Bodies[i]
	c.File = file
	checkBodyPoint(md.String(), &c, fail)
	if len(errs) != 2 || !strings.Contains(errs[0], "with 9.99 MB/s") || !strings.Contains(errs[1], file) {
		t.Errorf("a changed MB/s and a changed file: %q, want both found", errs)
	}
}

// A bench rebuilt from the result files alone has the same points: each file's body says its
// size and direction, the runner's CPU per MB included; a skipped cell and a run k6 wrote
// nothing for keep theirs from the runner.
func TestBodiesFromResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rate, mb, cpu := 400.0, 419.43, 1.91
	write := func(name string, r *result.Result) {
		data, _ := json.Marshal(r)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bodies-down-h2-1MiB-nginx.json", &result.Result{
		Schema: 1, Scenario: "bodies-down", Target: "nginx", Proto: "h2", Mode: BodiesMode, Route: "/bytes", RPS: &rate, Requests: 4000,
		Body:  &result.Body{Direction: result.Download, Bytes: result.MiB, MBPerS: &mb, TargetCPUMsPerMB: &cpu},
		Valid: true, Invalid: []string{},
	})
	write("bodies-up-h3-8MiB-pingora.json", &result.Result{
		Schema: 1, Scenario: "bodies-up", Target: "pingora", Proto: "h3", Mode: BodiesMode,
		Body: &result.Body{Direction: result.Upload, Bytes: 8 * result.MiB}, Skipped: "no h3", SkipReason: "pingora does not serve h3",
	})
	b, err := FromResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Bodies) != 2 || len(b.Cells) != 0 {
		t.Fatalf("bodies %+v, cells %d: want the 2 points and no cell", b.Bodies, len(b.Cells))
	}
	for _, c := range b.Bodies {
		switch c.Target {
		case "nginx":
			if !c.Valid || c.Direction != result.Download || c.Bytes != result.MiB || *c.MBPerS != mb || *c.CPUMsPerMB != cpu || c.File != "bodies-down-h2-1MiB-nginx.json" {
				t.Errorf("nginx's point %+v", c)
			}
		case "pingora":
			if c.NoProto != "no h3" || c.Direction != result.Upload || c.Bytes != 8*result.MiB || c.Valid || len(c.Invalid) != 0 {
				t.Errorf("pingora's point %+v: want not run, neither valid nor invalid", c)
			}
		}
	}
	// a run k6 wrote nothing for: invalid, at the size its job said
	b.Add("bodies-down-h1c-64KiB-direct.json", &result.Result{
		Scenario: "bodies-down", Target: "direct", Proto: "h1c", Mode: BodiesMode,
		Body: &result.Body{Direction: result.Download, Bytes: 64 * result.KiB}, Err: "k6 exited: signal: killed",
	}, nil)
	if c := b.Bodies[2]; c.Valid || c.Bytes != 64*result.KiB || !strings.Contains(strings.Join(c.Invalid, ";"), "k6 exited") {
		t.Errorf("the failed run's point %+v", c)
	}
}

// The grids say what a mark means only when one of their points carries it: the download grid
// has nginx's invalid 1 MiB point, the upload grid no invalid point, and neither a client-bound.
func TestBodiesNotesOnlyTheirMarks(t *testing.T) {
	for _, tb := range bodiesTables(sweepBench(t)) {
		if len(tb.Figures) == 0 {
			continue // the MB/s grid of each direction carries the notes
		}
		notes := strings.Join(tb.Notes, " ")
		wantInvalid := strings.Contains(tb.ID, "download")
		if got := strings.Contains(notes, "invalid: the point failed"); got != wantInvalid {
			t.Errorf("%s: says what invalid means %v, want %v: %q", tb.ID, got, wantInvalid, notes)
		}
		if strings.Contains(notes, "†") {
			t.Errorf("%s: explains † with no client-bound point: %q", tb.ID, notes)
		}
	}
}

// A rate keeps three figures below 100: an 8 MiB body over a short window finishes half a
// request a second, which a whole number would write as 0, a point that moved nothing.
func TestRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    float64
		want string
	}{{0.5, "0.50"}, {0.004, "0.00"}, {12.34, "12.3"}, {419.43, "419"}, {3965.2, "3,965"}} {
		if got := rate(tc.v); got != tc.want {
			t.Errorf("rate(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
