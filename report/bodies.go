package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/scenarios"
)

// BodiesMode is the `mode` of a body-size sweep's result file (make bench MODES=bodies).
const BodiesMode = scenarios.Bodies

// BodyCell is one point of the body-size sweep: a target moving bodies of one size one way over
// one protocol, in one closed-model run.
type BodyCell struct {
	Scenario  string  `json:"scenario"`  // bodies-down, bodies-up
	Direction string  `json:"direction"` // download, upload
	Target    string  `json:"target"`
	Proto     string  `json:"proto"`
	Bytes     float64 `json:"bytes"` // the body's size; -1: not known (a run that wrote nothing)
	// RPS and MBPerS are the run's req/s and body MB (10^6 bytes) per second in its measured
	// window; CPUMsPerMB the target's CPU per MB of body moved (result.Body's).
	RPS        *float64          `json:"rps"`
	MBPerS     *float64          `json:"mb_per_s"`
	CPUMsPerMB *float64          `json:"target_cpu_ms_per_mb,omitempty"`
	P50        float64           `json:"p50_ms"`
	P99        float64           `json:"p99_ms"`
	Resources  *sample.Resources `json:"resources,omitempty"`
	Valid      bool              `json:"valid"`
	Invalid    []string          `json:"invalid"`
	File       string            `json:"file,omitempty"`
	// NoProto says the point was not run: its target lacks the protocol ("no h3") or is not up.
	NoProto       string `json:"no_proto,omitempty"`
	NoProtoReason string `json:"no_proto_reason,omitempty"`
}

// bodyCell is the point a result file of mode bodies is, with the resources sampled beside it.
func bodyCell(file string, rf *runFile, res *sample.Resources) BodyCell {
	r := rf.Result
	c := BodyCell{
		Scenario: r.Scenario, Target: r.Target, Proto: r.Proto, Bytes: -1, RPS: r.RPS,
		P50: r.Latency.P50, P99: r.Latency.P99, Resources: res,
		Valid: r.Valid && r.Err == "", Invalid: append([]string{}, r.Invalid...), File: file,
		NoProto: r.Skipped, NoProtoReason: r.SkipReason,
	}
	if bd := r.Body; bd != nil {
		c.Direction, c.Bytes, c.MBPerS, c.CPUMsPerMB = bd.Direction, bd.Bytes, bd.MBPerS, bd.TargetCPUMsPerMB
		if c.CPUMsPerMB == nil && res != nil {
			c.CPUMsPerMB = bd.CPUPerMB(res.TargetCPUSeconds, res.Requests)
		}
	}
	if c.Direction == "" {
		c.Direction = result.Download
		if r.Route == "/upload" || strings.HasSuffix(r.Scenario, "-up") {
			c.Direction = result.Upload
		}
	}
	if r.Err != "" {
		c.Invalid = append(c.Invalid, r.Err)
	}
	if c.NoProto != "" && r.Err == "" {
		c.Valid, c.Invalid = false, nil
	}
	return c
}

// name is the point as the invalid list names it: "bodies-down h2 8MiB nginx".
func (c *BodyCell) name() string {
	return strings.Join([]string{c.Scenario, c.Proto, c.size(), c.Target}, " ")
}

func (c *BodyCell) size() string {
	if c.Bytes < 0 {
		return "size unknown"
	}
	return result.SizeLabel(int(c.Bytes))
}

// anchor is the HTML id of the point's reason, which the first screen links to.
func (c *BodyCell) anchor() string {
	return invalidAnchor(c.Scenario+"-"+c.size(), c.Proto, c.Target)
}

// bodyDirections are the sweep's directions, in the report's order.
var bodyDirections = []string{result.Download, result.Upload}

// bodyFigure is one of the figures a sweep's grid shows per point.
type bodyFigure struct {
	id, title string
	positive  bool // sizes above 0 only: a 0-byte body moves no MB
	text      func(c *BodyCell) string
}

var bodyFigures = []bodyFigure{
	{"", "MB/s", true, func(c *BodyCell) string { return optNum(c.MBPerS, rate) }},
	{"-rps", "req/s", false, func(c *BodyCell) string { return optNum(c.RPS, rate) }},
	{"-cpu", "target CPU ms per MB", true, func(c *BodyCell) string { return optNum(c.CPUMsPerMB, cpuPerMB) }},
}

// sweep is one direction of the sweep as its tables and chart read it.
type sweep struct {
	dir     string
	protos  []string  // in the report's order
	targets []string  // the bench's order, direct first
	sizes   []float64 // ascending
	cells   map[sweepKey]*BodyCell
}

type sweepKey struct {
	proto, target string
	bytes         float64
}

// sweepOf gathers the points of one direction; nil when there are none.
func sweepOf(b *Bench, dir string) *sweep {
	s := &sweep{dir: dir, cells: map[sweepKey]*BodyCell{}}
	var targets []string
	for i := range b.Bodies {
		c := &b.Bodies[i]
		if c.Direction != dir {
			continue
		}
		if !slices.Contains(s.protos, c.Proto) {
			s.protos = append(s.protos, c.Proto)
		}
		if !slices.Contains(targets, c.Target) {
			targets = append(targets, c.Target)
		}
		if c.Bytes >= 0 && !slices.Contains(s.sizes, c.Bytes) {
			s.sizes = append(s.sizes, c.Bytes)
		}
		s.cells[sweepKey{c.Proto, c.Target, c.Bytes}] = c
	}
	if len(s.protos) == 0 {
		return nil
	}
	slices.SortStableFunc(s.protos, func(a, c string) int { return protoRank(a) - protoRank(c) })
	slices.Sort(s.sizes)
	for _, t := range b.Targets() {
		if slices.Contains(targets, t) {
			s.targets = append(s.targets, t)
		}
	}
	return s
}

// notRun is why a target has no point over proto at all ("no h3"), "" when it has some.
func (s *sweep) notRun(proto, target string) string {
	why := ""
	for k, c := range s.cells {
		if k.proto != proto || k.target != target {
			continue
		}
		if c.NoProto == "" {
			return ""
		}
		why = c.NoProto
	}
	return why
}

// bodiesTables are the sweep's grids: per direction, MB/s, req/s and the target's CPU per MB,
// each a row per protocol and target and a column per size.
func bodiesTables(b *Bench) []table {
	var out []table
	for _, dir := range bodyDirections {
		s := sweepOf(b, dir)
		if s == nil {
			continue
		}
		for _, f := range bodyFigures {
			out = append(out, s.table(f))
		}
	}
	return out
}

func (s *sweep) table(f bodyFigure) table {
	t := table{
		ID: "bodies-" + s.dir + f.id, Title: fmt.Sprintf("Body sizes, %s: %s", s.dir, f.title),
		Head: []string{"protocol", "target"},
	}
	if f.id == "" {
		what := "GET /bytes?size=N: the upstream's pattern, every body compared byte for byte"
		if s.dir == result.Upload {
			what = "POST /upload of N bytes: the upstream must say it received every one ({\"bytes\":N})"
		}
		t.Intro = "The body-size sweep (make bench MODES=bodies): " + what + ". Each point is one run of CONNECTIONS connections for DURATION after its warm-up, " +
			"one request in flight per connection over every protocol (HTTP/2 and HTTP/3 too): MB/s (10^6 bytes of body a second) and req/s over the measured window, " +
			"and the target's CPU (its whole process tree) per MB of body over every request sent. The curves draw MB/s against the size, one per protocol, one line per target."
		invalid, bound := s.marks()
		if invalid {
			t.Notes = append(t.Notes, "invalid: the point failed a check or a rule; why is under \"Invalid cells\" (on the curves: a hollow point on the axis, the line broken there).")
		}
		if bound {
			t.Notes = append(t.Notes, "†: client-bound (the client was the bottleneck: see the resources table's note).")
		}
		t.Figures = s.curves()
	}
	var sizes []float64
	for _, n := range s.sizes {
		if n > 0 || !f.positive {
			sizes = append(sizes, n)
			t.Head = append(t.Head, result.SizeLabel(int(n)))
		}
	}
	for _, p := range s.protos {
		for _, tg := range s.targets {
			cells := []string{protoName(p), tg}
			class := ""
			if tg == "direct" {
				class = classBaseline
			}
			if why := s.notRun(p, tg); why != "" {
				for range sizes {
					cells = append(cells, why)
				}
				t.Rows = append(t.Rows, row{Class: classNoProto, Cells: cells})
				continue
			}
			for _, n := range sizes {
				cells = append(cells, s.text(p, tg, n, f))
			}
			t.Rows = append(t.Rows, row{Class: class, Cells: cells})
		}
	}
	return t
}

// marks tells whether any point the grids show is invalid, and any client-bound (†): the
// notes say what a mark means only where one is.
func (s *sweep) marks() (invalid, bound bool) {
	for _, c := range s.cells {
		if c.NoProto != "" {
			continue
		}
		invalid = invalid || !c.Valid
		bound = bound || c.Valid && c.Resources != nil && c.Resources.ClientBound
	}
	return invalid, bound
}

// text is one point's figure in a grid: "—" when it did not run, "invalid", else the figure.
func (s *sweep) text(proto, target string, n float64, f bodyFigure) string {
	c := s.cells[sweepKey{proto, target, n}]
	switch {
	case c == nil:
		return "—"
	case c.NoProto != "":
		return c.NoProto
	case !c.Valid:
		return "invalid"
	}
	v := f.text(c)
	if c.Resources != nil && c.Resources.ClientBound && v != "—" {
		v += " †"
	}
	return v
}

func optNum(v *float64, format func(float64) string) string {
	if v == nil {
		return "—"
	}
	return format(*v)
}

// rate is a rate (MB/s, req/s) as the sweep's tables write it: whole above 100, three figures
// below (an 8 MiB body over a short window is 0.50 req/s, not 0).
func rate(v float64) string {
	switch {
	case v >= 100:
		return fmtInt(v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// cpuPerMB is CPU ms per MB as the tables write it.
func cpuPerMB(v float64) string {
	if v >= 100 {
		return fmtInt(v)
	}
	return fmt.Sprintf("%.3g", v)
}

// curves are the sweep's curves under its MB/s grid: per protocol, MB/s against the body's size
// on a log axis, one line per target. 0 B moves no MB and is not drawn; an invalid point is a
// gap on the axis (its figure does not count); a target without the protocol has no line.
func (s *sweep) curves() []curve {
	var out []curve
	for _, p := range s.protos {
		c := curve{
			ID:     "curve-bodies-" + s.dir + "-" + p,
			Title:  fmt.Sprintf("MB/s against body size, %s, %s", s.dir, protoName(p)),
			XLabel: "body size, bytes (log)", YLabel: "MB/s", LogX: true,
		}
		for _, tg := range s.targets {
			l := curveLine{Series: tg}
			for _, n := range s.sizes {
				if pt, ok := s.point(p, tg, n); ok {
					l.Points = append(l.Points, pt)
				}
			}
			if len(l.Points) > 0 {
				c.Lines = append(c.Lines, l)
			}
		}
		if len(c.Lines) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// point is one point of a target's line, false when it has none there (0 B, not run).
func (s *sweep) point(proto, target string, n float64) (curvePoint, bool) {
	c := s.cells[sweepKey{proto, target, n}]
	if c == nil || c.NoProto != "" || n <= 0 {
		return curvePoint{}, false
	}
	label := fmt.Sprintf("%s %s %s", target, protoName(proto), result.SizeLabel(int(n)))
	if !c.Valid || c.MBPerS == nil {
		return curvePoint{X: n, Gap: true, Title: label + ": invalid"}, true
	}
	title := fmt.Sprintf("%s: %s MB/s, %s req/s", label, rate(*c.MBPerS), optNum(c.RPS, rate))
	if c.CPUMsPerMB != nil {
		title += fmt.Sprintf(", target CPU %s ms/MB", cpuPerMB(*c.CPUMsPerMB))
	}
	return curvePoint{X: n, Y: *c.MBPerS, Title: title}, true
}

// bodyRunRows are the sweep's rows in the table of every run: one per point run, its scenario
// named with its size ("bodies-down 8MiB"), linked to its file.
func bodyRunRows(b *Bench) []row {
	var out []row
	for _, c := range b.Bodies {
		if c.NoProto != "" {
			continue
		}
		v, class := "yes", ""
		if !c.Valid {
			v, class = "NO", classInvalid
		}
		out = append(out, row{Class: class, Cells: []string{
			c.Scenario + " " + c.size(), c.Proto, c.Target, "1", optNum(c.RPS, rate), ms(c.P50), ms(c.P99), v, c.File, "—",
		}})
	}
	return out
}

// checkBodyPoint is Check's for one point of the sweep: one not run is said; one run has its
// row in the table of every run with its validity and file, an invalid one's reasons are said,
// and a valid one's MB/s is in its grid.
func checkBodyPoint(m string, c *BodyCell, fail func(format string, args ...any)) {
	name := c.name()
	if c.NoProto != "" {
		if !strings.Contains(m, mdEscape(fmt.Sprintf("%s %s %s: %s", c.Scenario, c.Proto, c.Target, c.NoProto))) {
			fail("%s: not run (%s), and the report does not say so", name, c.NoProto)
		}
		return
	}
	valid := "yes"
	if !c.Valid {
		valid = "NO"
	}
	line := lineWith(m, fmt.Sprintf("| %s | %s | %s | 1 |", mdEscape(c.Scenario+" "+c.size()), mdEscape(c.Proto), mdEscape(c.Target)))
	if line == "" || c.File == "" || !strings.Contains(line, "| "+valid+" |") || !strings.Contains(line, mdEscape(c.File)) {
		fail("%s: row %q in the table of every run, want valid=%s and file %q", name, line, valid, c.File)
	}
	for _, why := range c.Invalid {
		if !strings.Contains(m, mdEscape(why)) {
			fail("%s: invalid, but the reason %q is not in the report", name, why)
		}
	}
	if !c.Valid || c.MBPerS == nil || c.Bytes <= 0 {
		return
	}
	prefix, fig := fmt.Sprintf("| %s | %s |", mdEscape(protoName(c.Proto)), mdEscape(c.Target)), rate(*c.MBPerS)
	for _, l := range strings.Split(m, "\n") {
		if strings.HasPrefix(l, prefix) && (strings.Contains(l, "| "+fig+" |") || strings.Contains(l, "| "+fig+" † |")) {
			return
		}
	}
	fail("%s: no grid row %q with %s MB/s", name, prefix, fig)
}
