package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/stack"
)

// The dashboards in a real Grafana: TestDashboardsInGrafana runs only under
// `make test-dashboards`, which unpacks the Grafana of GRAFANA_TARBALL (or takes GRAFANA_HOME)
// and names it in PROXYBENCH_GRAFANA_HOME; `go test ./...` skips it.

// grafanaBenchEnv keeps the bench short (the whole test adds a few minutes to `make test`) yet
// long enough for several 1-second windows per cell.
var grafanaBenchEnv = []string{
	"DURATION=4s", "WARMUP=1s", "CONNECTIONS=4", "STREAMS=4",
	"REQUESTS=200", "FRESH_CONNECTIONS=4", "SAMPLES=3", "CALIBRATE_SECONDS=0",
	// the sweeps at two points each, so that each curve is a line
	"IDLE_CONNECTIONS=20", "CONNECTION_LEVELS=4,8", "BODY_SIZES=1KiB,64KiB",
	"K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false",
}

// dashboardLoads is how many times a dashboard is loaded before a panel's error or "No data"
// counts (grafanaRun.render).
const dashboardLoads = 3

// grafanaPortOffset moves the test's stack off the default ports (and the e2e tests' offsets).
const grafanaPortOffset = 3000

// grafanaRun is one bench streamed into InfluxDB, seen through Grafana.
type grafanaRun struct {
	grafana  *GrafanaServer
	influx   *Server
	testid   string
	results  string // results/<testid>
	from, to time.Time
	// answers are what Grafana answered each panel (dashboard file → panel id → refId), once
	answers map[string]map[int]map[string]QueryResult
}

func startGrafanaRun(t *testing.T) *grafanaRun {
	t.Helper()
	skipShort(t, "Grafana, influxd and Chromium")
	home := os.Getenv("PROXYBENCH_GRAFANA_HOME")
	if home == "" {
		t.Skip("no Grafana: `make test-dashboards GRAFANA_TARBALL=…` (or GRAFANA_HOME=…) runs this test")
	}
	g, err := grafanaAt(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"k6", "upstream", "proxybench"} {
		if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
			t.Fatalf("bin/%s is missing: run `make test-dashboards` (it builds everything first)", b)
		}
	}
	influxd, err := InstalledBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	influx, err := Start(ctx, influxd, filepath.Join(tmp, "influxdb"), "127.0.0.1:"+strconv.Itoa(freePort(t)), DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := influx.Stop(10 * time.Second); err != nil {
			t.Errorf("stop InfluxDB: %v", err)
		}
	})
	gs, err := StartGrafana(ctx, g, root, filepath.Join(tmp, "grafana"), "127.0.0.1:"+strconv.Itoa(freePort(t)), influx.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := gs.Stop(10 * time.Second); err != nil {
			t.Errorf("stop Grafana: %v", err)
		}
	})
	t.Logf("Grafana %s (log %s), InfluxDB %s", gs.URL(), gs.Log, influx.URL())

	r := &grafanaRun{
		grafana: gs, influx: influx, testid: "dashboards-" + time.Now().UTC().Format("20060102-150405"),
		answers: map[string]map[int]map[string]QueryResult{},
	}
	r.results = filepath.Join(root, "results", r.testid)
	r.from = time.Now().Add(-time.Minute)
	targets := writeBenchTargets(t, tmp)
	st := &State{Server: *influx, Bucket: DefaultBucket}
	cmd := exec.Command(filepath.Join(root, "bin", "proxybench"), "bench", "-targets", "nginx",
		"-modes", "reused,fresh,probe,capacity,idle,connections,bodies", "-capacity-protos", "h1c", "-protos", "h1c,h2", "-runs", "1", "-calibrate-seconds", "0", "-testid", r.testid)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "TARGETS_FILE="+targets, "PROXYBENCH_RUN="+filepath.Join(tmp, "run"),
		"RESULTS_DIR="+filepath.Join(root, "results")), append(grafanaBenchEnv, st.K6Env()...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		t.Logf("proxybench bench: %v (judged below, cell by cell)\n%s", err, out.String())
	}
	t.Logf("bench %s took %v", r.testid, time.Since(t0).Round(time.Second))
	r.to = time.Now().Add(time.Minute)
	return r
}

// writeBenchTargets writes the repository's targets.json for direct and nginx alone, moved by
// grafanaPortOffset, and checks the ports are free.
func writeBenchTargets(t *testing.T, dir string) string {
	t.Helper()
	cfg, err := stack.LoadConfig(filepath.Join(root, "targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Targets = map[string]stack.Ports{stack.Direct: cfg.Targets[stack.Direct], "nginx": cfg.Targets["nginx"]}
	cfg.Upstream.H1C += grafanaPortOffset
	for n, p := range cfg.Targets {
		cfg.Targets[n] = p.Offset(grafanaPortOffset)
		for _, port := range cfg.Targets[n].TCP() {
			if err := stack.CheckPortFree(cfg.Address, port.Port); err != nil {
				t.Fatalf("the test's stack: %v", err)
			}
		}
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "targets.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDashboardsInGrafana provisions a real Grafana from dashboards/provisioning, streams a
// short bench (direct and nginx; h1c and h2; reused, fresh, probes and equal load) into a real
// InfluxDB, and then (a) runs every panel's queries through Grafana's /api/ds/query with the
// variables set as a user picks them (the run's testid, everything else All): each returns
// data and no error, and a panel's series are told apart by their names; (b) reconciles the
// figures the panels show with the run's result JSON; (c) renders every dashboard in headless
// Chromium: no panel error, no "No data", no empty table column; the screenshots stay in
// results/<testid>/dashboards/ for a person to look at.
func TestDashboardsInGrafana(t *testing.T) {
	r := startGrafanaRun(t)
	dashboards := loadDashboards(t)
	t.Run("queries", func(t *testing.T) {
		for _, d := range dashboards {
			t.Run(d.File, func(t *testing.T) { r.checkPanels(t, d) })
		}
	})
	t.Run("several testids", func(t *testing.T) { r.checkSeveralTestids(t, dashboards) })
	t.Run("reconcile", r.reconcile)
	t.Run("browser", func(t *testing.T) { r.render(t, dashboards) })
}

// checkSeveralTestids: the comparison takes several testids (a Docker stack's runs share one,
// and a user compares it with another), and All. Picked with a testid that has no points, or
// as All (this InfluxDB holds the one run), every panel answers exactly what it answered for
// the run's testid alone: the multi-value regex Grafana sends works in every query, and no row
// is summed across testids.
func (r *grafanaRun) checkSeveralTestids(t *testing.T, dashboards []Dashboard) {
	for _, d := range dashboards {
		if d.File != "proxy-comparison.json" {
			continue
		}
		for _, v := range d.Templating.List {
			if v.Name == "testid" && (!v.Multi || !v.IncludeAll) {
				t.Errorf("%s: variable testid: multi %v, includeAll %v; want both (several testids side by side)", d.File, v.Multi, v.IncludeAll)
			}
		}
		alone := r.variables(t, d)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for name, testids := range map[string][]string{"two picked": {r.testid, "dashboards-no-such-run"}, "All": {allMarker + ".*"}} {
			values := maps.Clone(alone)
			values["testid"] = testids
			for _, p := range Flatten(d.Panels) {
				if len(p.Targets) == 0 {
					continue
				}
				res, err := r.panelQuery(ctx, p, values)
				if err != nil {
					t.Errorf("%s: panel %q, testid %s: %v", d.File, p.Title, name, err)
					continue
				}
				want := r.answers[d.File][p.ID]
				for _, q := range p.Targets {
					if got, w := frameNumbers(res[q.RefID]), frameNumbers(want[q.RefID]); !maps.EqualFunc(got, w, slices.Equal) {
						t.Errorf("%s: panel %q query %s, testid %s: %v, the run's testid alone %v", d.File, p.Title, q.RefID, name, got, w)
					}
				}
			}
		}
	}
}

// frameNumbers are a query's numbers by series (measurement and column, and its tags: Grafana
// names a frame with them in no set order) and field name.
func frameNumbers(qr QueryResult) map[string][]float64 {
	out := map[string][]float64{}
	for _, f := range qr.Frames {
		name, _, _ := strings.Cut(f.Schema.Name, " {")
		for i, fd := range f.Schema.Fields {
			if fd.Type != "number" || i >= len(f.Data.Values) {
				continue
			}
			var tags []string
			for k, v := range fd.Labels {
				tags = append(tags, k+"="+v)
			}
			slices.Sort(tags)
			k := name + "{" + strings.Join(tags, ",") + "} " + fd.Name
			for _, v := range f.Data.Values[i] {
				if x, ok := v.(float64); ok {
					out[k] = append(out[k], x)
				}
			}
		}
	}
	return out
}

// variables sets a dashboard's variables as a user would: the run's testid (which its query
// must offer), and All for the others (every value their queries give, through Grafana).
func (r *grafanaRun) variables(t *testing.T, d Dashboard) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	values := map[string][]string{"testid": {r.testid}}
	for _, v := range d.Templating.List {
		res, err := r.grafana.DSQuery(ctx, r.from, r.to, DSQuery{
			RefID: "A", Datasource: DSRef{Type: "influxdb", UID: DataSourceUID}, RawQuery: true,
			Query: substituteAll(v.Query, values), IntervalMs: 1000, MaxDataPts: 1000,
		})
		if err != nil {
			t.Fatalf("%s: variable %s: %v", d.File, v.Name, err)
		}
		var vals []string
		for _, f := range res["A"].Frames {
			for _, col := range f.Data.Values {
				for _, x := range col {
					if s, ok := x.(string); ok && !slices.Contains(vals, s) {
						vals = append(vals, s)
					}
				}
			}
		}
		if e := res["A"].Error; e != "" || len(vals) == 0 {
			t.Errorf("%s: variable %s: no values (%s) from %s", d.File, v.Name, e, v.Query)
		}
		if v.Name == "testid" {
			if !slices.Contains(vals, r.testid) {
				t.Errorf("%s: variable testid offers %v, not the run's %s", d.File, vals, r.testid)
			}
			continue
		}
		if v.IncludeAll && v.AllValue != "" {
			vals = []string{allMarker + v.AllValue} // All: Grafana sends its allValue as it is
		}
		values[v.Name] = vals
	}
	return values
}

// allMarker marks a variable's value as its allValue, which Grafana puts in a query unescaped.
const allMarker = "\x00all:"

// substituteAll interpolates a query's variables as Grafana's frontend does: an All with an
// allValue as that value, verbatim; the others regex-escaped (SubstituteVars).
func substituteAll(q string, values map[string][]string) string {
	rest := map[string][]string{}
	for name, vals := range values {
		if len(vals) == 1 && strings.HasPrefix(vals[0], allMarker) {
			q = strings.ReplaceAll(q, "$"+name, strings.TrimPrefix(vals[0], allMarker))
			continue
		}
		rest[name] = vals
	}
	return SubstituteVars(q, rest)
}

// panelQuery runs one panel's queries through Grafana, as the panel does.
func (r *grafanaRun) panelQuery(ctx context.Context, p Panel, values map[string][]string) (map[string]QueryResult, error) {
	var qs []DSQuery
	for _, q := range p.Targets {
		qs = append(qs, DSQuery{
			RefID: q.RefID, Datasource: DSRef{Type: "influxdb", UID: DataSourceUID}, RawQuery: true, Alias: q.Alias,
			Query: substituteAll(q.Query, values), ResultFormat: q.ResultFormat, IntervalMs: 1000, MaxDataPts: 1000,
		})
	}
	return r.grafana.DSQuery(ctx, r.from, r.to, qs...)
}

// checkPanels: every query of every panel returns data and no error through Grafana, and no
// two series of a graph share a name (a legend that says "nginx" three times tells nothing).
func (r *grafanaRun) checkPanels(t *testing.T, d Dashboard) {
	values := r.variables(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r.answers[d.File] = map[int]map[string]QueryResult{}
	for _, p := range Flatten(d.Panels) {
		if len(p.Targets) == 0 {
			continue
		}
		res, err := r.panelQuery(ctx, p, values)
		if err != nil {
			t.Errorf("%s: panel %q: %v", d.File, p.Title, err)
			continue
		}
		r.answers[d.File][p.ID] = res
		names := map[string]int{}
		for _, q := range p.Targets {
			qr, ok := res[q.RefID]
			switch {
			case !ok:
				t.Errorf("%s: panel %q query %s: no result", d.File, p.Title, q.RefID)
			case qr.Error != "":
				t.Errorf("%s: panel %q query %s: %s", d.File, p.Title, q.RefID, qr.Error)
			case !framesHaveData(qr.Frames):
				t.Errorf("%s: panel %q query %s: no data from\n%s", d.File, p.Title, q.RefID, substituteAll(q.Query, values))
			}
			for _, f := range qr.Frames {
				names[f.Schema.Name]++
			}
		}
		if p.Type == "table" {
			continue
		}
		for n, c := range names {
			if c > 1 {
				t.Errorf("%s: panel %q: %d series are all named %q: the alias must name what tells them apart", d.File, p.Title, c, n)
			}
		}
	}
}

// framesHaveData: a number that is not null, in any frame.
func framesHaveData(frames []Frame) bool {
	for _, f := range frames {
		for i, col := range f.Data.Values {
			if i < len(f.Schema.Fields) && f.Schema.Fields[i].Type == "time" {
				continue
			}
			for _, v := range col {
				if _, ok := v.(float64); ok {
					return true
				}
			}
		}
	}
	return false
}

// cellKey names one series of a table's query: the column (its AS) and the series' tags.
type cellKey struct{ column, target, scenario string }

// tableValues reads what Grafana answered a table panel's queries (tables have no alias:
// Grafana names each series "measurement.column { tags }") as column → (target, scenario) →
// value, summed over the other tags (proto: the failures of a request without a response
// carry none).
func (r *grafanaRun) tableValues(t *testing.T, d Dashboard, panelTitle string) map[cellKey]float64 {
	t.Helper()
	res := r.answer(t, d, func(p Panel) bool { return p.Title == panelTitle })
	out := map[cellKey]float64{}
	for _, qr := range res {
		for _, f := range qr.Frames {
			name := f.Schema.Name
			if i := strings.Index(name, " {"); i >= 0 {
				name = name[:i]
			}
			_, column, _ := strings.Cut(name, ".")
			for i, fd := range f.Schema.Fields {
				if fd.Type != "number" || i >= len(f.Data.Values) {
					continue
				}
				for _, v := range f.Data.Values[i] {
					if x, ok := v.(float64); ok {
						// a row of a sweep's point, of scenario, or (the headline's) of protocol
						row, ok := fd.Labels["point"]
						if !ok {
							row, ok = fd.Labels["scenario"]
						}
						if !ok {
							row = fd.Labels["proto"]
						}
						out[cellKey{column, fd.Labels["target"], row}] += x
					}
				}
			}
		}
	}
	return out
}

// benchResult is what the reconciliation reads of a result JSON.
type benchResult struct {
	Target   string             `json:"target"`
	Scenario string             `json:"scenario"`
	Proto    string             `json:"proto"`
	Wire     string             `json:"expected_proto"` // HTTP/1.1, HTTP/2.0: the proto tag
	Mode     string             `json:"mode"`
	Requests float64            `json:"requests"`
	RPS      float64            `json:"rps"`
	Duration float64            `json:"duration_s"` // what the result's rate divides by
	Failed   float64            `json:"failed_requests"`
	Latency  map[string]float64 `json:"latency_ms"`
	TTFB     map[string]float64 `json:"ttfb_ms"`
	K6       struct {
		Metrics map[string]struct {
			Values map[string]float64 `json:"values"`
		} `json:"metrics"`
	} `json:"k6"`
	// Config.Point is a sweep's run's place on it (SWEEP_POINT): its points carry it as a tag,
	// and the comparison's dashboards leave them out of the matrix's cells.
	Config struct {
		Point string `json:"point"`
	} `json:"config"`
	file string
	mod  time.Time
}

// tag is the k6 scenario tag of the cell's measured scenario (reused-h1c; a probe's json-h2).
func (b *benchResult) tag() string {
	if strings.HasSuffix(b.Scenario, "-"+b.Proto) {
		return b.Scenario
	}
	return b.Scenario + "-" + b.Proto
}

// metric is k6's summary of name for the measured scenario.
func (b *benchResult) metric(name, stat string) (float64, bool) {
	m, ok := b.K6.Metrics[name+"{scenario:"+b.tag()+"}"]
	if !ok {
		return 0, false
	}
	v, ok := m.Values[stat]
	return v, ok
}

func (r *grafanaRun) loadResults(t *testing.T) []*benchResult {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.results, "*.json"))
	// the capacity search's steps: equal-load runs of their own, streamed as any run is
	steps, _ := filepath.Glob(filepath.Join(r.results, report.CapacityDir, "*.json"))
	// and the connections sweep's levels, each a reused run of its own
	levels, _ := filepath.Glob(filepath.Join(r.results, report.ConnectionsDir, "c*", "*.json"))
	files = append(append(files, steps...), levels...)
	var out []*benchResult
	for _, f := range files {
		if filepath.Base(f) == "bench.json" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b := &benchResult{file: filepath.Base(f)}
		if err := json.Unmarshal(data, b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if b.Target == "" || b.Scenario == "" {
			continue // not a cell's result
		}
		if st, err := os.Stat(f); err == nil {
			b.mod = st.ModTime()
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		t.Fatalf("no result JSON in %s", r.results)
	}
	return out
}

// figure is one line of the reconciliation table.
type figure struct {
	cell, name           string
	dashboard, result    float64
	tolerance            float64 // relative; 0: exact
	floor                float64 // absolute slack besides it (ms: the histogram's resolution near 0)
	why                  string  // where the tolerance comes from
	missingDash, missing bool
	atMost               bool // a bound: the dashboard may show less
	info                 bool // shown in the table, not asserted (why says why)
}

func (f figure) ok() bool {
	if f.missingDash || f.missing {
		return false
	}
	if f.atMost {
		return f.dashboard <= f.result*(1+f.tolerance)+f.floor
	}
	return math.Abs(f.dashboard-f.result) <= f.tolerance*math.Abs(f.result)+f.floor
}

// Tolerances, each from how the figure is aggregated:
const (
	// a percentile from the _cdf points is interpolated within one row of its grid, 6.25% wide
	// (extensions/influxdb/README.md), k6's own between its sorted samples
	// (near zero: the cdf's lowest row, [0, 2^-6 ms))
	quantileTol, quantileFloor = 0.0625, 0.016
	// a whole-run rate divides by the scenario's span in k6 (first to last sample), the
	// result by DURATION: the first and last request's latency apart
	rateTol = 0.05
	// with fewer samples beyond it, a percentile is k6's interpolation between two samples that
	// may lie rows apart (p99 of 200 fresh requests was 8.6% off): not the same figure, not
	// compared (p95 needs 200 samples, p99 1000; a median 100, or an odd count)
	minTail = 10
	// bytes per second in a 1 s window against the result's bytes per request times that
	// window's requests: an iteration's bytes are spread evenly over it (the native loop's
	// iteration is the whole scenario), so a second shows the iteration's mean rate
	bytesTol = 0.25
	// the requests' bytes vary with their headers only (the bodies are the route's)
	bytesTotalTol = 0.05
)

// reconcile compares what the panels show with the result JSON of every cell of the run.
func (r *grafanaRun) reconcile(t *testing.T) {
	results := r.loadResults(t)
	byFile := map[string]Dashboard{}
	for _, d := range loadDashboards(t) {
		byFile[d.File] = d
	}
	head := r.tableValues(t, byFile["proxy-comparison.json"], "Headline: reused connections, per protocol")
	cmp := r.tableValues(t, byFile["proxy-comparison.json"], "Side by side: whole measured run")
	ttfb := r.tableValues(t, byFile["probes.json"], "Time to first byte per route and protocol (whole run)")
	sse := r.tableValues(t, byFile["probes.json"], "First SSE event and first stream chunk (whole run)")
	ws := r.tableValues(t, byFile["probes.json"], "WebSocket: connect and echo (whole run)")

	var figs []figure
	add := func(b *benchResult, name string, dash map[cellKey]float64, col string, want float64, have bool, tol, floor float64, why string) {
		figs = append(figs, newFigure(b, name, dash, col, want, have, tol, floor, why))
	}
	for _, b := range results {
		if b.Config.Point != "" {
			continue // a sweep's run: the curves dashboard's (sweepFigures)
		}
		if b.Mode == "equal-load" {
			continue // its own panel is the comparison's too, but its result's rate is the offered one
		}
		if n, _ := b.metric("http_reqs", "count"); n > 0 { // a WebSocket probe has none
			figs = append(figs, httpFigures(b, head, cmp, ttfb)...)
		}
		for _, m := range []struct{ metric, table string }{
			{"sse_first_event", "sse first event"},
			{"stream_first_chunk", "stream first chunk"},
			{"ws_connect", "connect"},
			{"ws_echo", "echo"},
		} {
			dash := sse
			if strings.HasPrefix(m.metric, "ws_") {
				dash = ws
			}
			if v, ok := b.metric(m.metric, "max"); ok && v > 0 {
				add(b, m.table+" max ms", dash, m.table+" max ms", v, true, 0, 1e-6, "exact: a max")
				if n, _ := b.metric(m.metric, "count"); samePercentile(n, false, 0.5) {
					p50, _ := b.metric(m.metric, "med")
					add(b, m.table+" p50 ms", dash, m.table+" p50 ms", p50, true, quantileTol, quantileFloor, "the _cdf row's interpolation")
				}
			}
		}
	}
	figs = append(figs, r.liveFigures(t, byFile["live-run.json"], results)...)
	figs = append(figs, r.capacityFigures(t, byFile["curves.json"])...)
	figs = append(figs, r.sweepFigures(t, byFile["curves.json"])...)

	var table strings.Builder
	fmt.Fprintf(&table, "| cell | figure | dashboard | result JSON | error | allowed | |\n|---|---|---|---|---|---|---|\n")
	for _, f := range figs {
		errPct := 0.0
		if f.result != 0 {
			errPct = 100 * (f.dashboard - f.result) / f.result
		}
		verdict := "ok"
		switch {
		case f.missingDash:
			verdict = "NOT IN THE DASHBOARD"
		case f.missing:
			verdict = "NOT IN THE RESULT"
		case !f.ok():
			verdict = "MISMATCH"
		}
		switch {
		case f.info && verdict != "ok":
			t.Logf("%s %s: dashboard %v, result %v (%s)", f.cell, f.name, f.dashboard, f.result, f.why)
			verdict = "info (not asserted): " + verdict
		case verdict != "ok":
			t.Errorf("%s %s: dashboard %v, result %v (%s; %s)", f.cell, f.name, f.dashboard, f.result, verdict, f.why)
		}
		fmt.Fprintf(&table, "| %s | %s | %.4g | %.4g | %+.2f%% | %s | %s |\n", f.cell, f.name, f.dashboard, f.result, errPct,
			allowed(f), verdict)
	}
	dir := filepath.Join(r.results, "dashboards")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reconciliation.md"), []byte(table.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("reconciliation (%s):\n%s", filepath.Join(dir, "reconciliation.md"), table.String())
}

// httpFigures are an HTTP cell's figures in the comparison's table and, for a probe, in the
// probes' time to first byte.
func httpFigures(b *benchResult, head, cmp, ttfb map[cellKey]float64) []figure {
	var figs []figure
	add := func(name string, dash map[cellKey]float64, col string, want float64, have bool, tol, floor float64, why string) {
		figs = append(figs, newFigure(b, name, dash, col, want, have, tol, floor, why))
	}
	if b.Mode == "reused" { // the headline: a row per target and protocol
		p99, ok := b.metric("http_req_duration", "p(99)")
		for _, f := range []figure{
			newFigure(b, "headline req/s", head, "req/s", b.RPS, b.RPS > 0, rateTolFor(b), 0, "span of the scenario's requests vs the result's duration"),
			newFigure(b, "headline p99 ms", head, "p99 ms", p99, ok, quantileTol, quantileFloor, "the _cdf row's interpolation"),
		} {
			v, found := head[cellKey{strings.TrimPrefix(f.name, "headline "), b.Target, b.Wire}]
			f.dashboard, f.missingDash = v, !found
			figs = append(figs, f)
		}
	}
	add("requests", cmp, "requests", b.Requests, true, 0, 0, "exact: the count of the measured scenario")
	add("failures", cmp, "failed", b.Failed, true, 0, 0, "exact")
	n, _ := b.metric("http_req_duration", "count")
	for _, q := range []struct {
		col, stat string
		tail      bool
		q         float64
	}{{"p50 ms", "med", false, 0.5}, {"p95 ms", "p(95)", true, 0.95}, {"p99 ms", "p(99)", true, 0.99}} {
		if !samePercentile(n, q.tail, q.q) {
			continue
		}
		v, ok := b.metric("http_req_duration", q.stat)
		add(strings.TrimSuffix(q.col, " ms")+" ms", cmp, q.col, v, ok, quantileTol, quantileFloor, "the _cdf row's interpolation")
	}
	if b.Mode != "probe" {
		add("req/s", cmp, "req/s", b.RPS, b.RPS > 0, rateTolFor(b), 0, "span of the scenario's requests vs the result's duration")
		return figs
	}
	add("ttfb samples", ttfb, "samples", b.Requests, true, 0, 0, "exact")
	if v, ok := b.metric("http_req_waiting", "max"); ok {
		add("ttfb max ms", ttfb, "max ms", v, true, 0, 1e-6, "exact: a max")
		if n, _ := b.metric("http_req_waiting", "count"); samePercentile(n, false, 0.5) {
			p50, _ := b.metric("http_req_waiting", "med")
			add("ttfb p50 ms", ttfb, "p50 ms", p50, true, quantileTol, quantileFloor, "the _cdf row's interpolation")
		}
	}
	return figs
}

// samePercentile: k6's percentile of n samples and the cdf's are the same figure (within a row)
// when k6's is a sample: a median of an odd count; a tail, given minTail samples. Otherwise k6
// interpolates between two samples that may lie rows apart (a median of 0.7 and 3.4 ms is 2.1).
func samePercentile(n float64, tail bool, q float64) bool {
	if tail {
		return n*(1-q) >= minTail
	}
	return n >= 100 || int(n)%2 == 1
}

// rateTolFor: rateTol, plus the slowest request's share of the run (a fresh run lasts a tenth
// of a second: the dashboard's span runs from its first request sample, the result's from the
// first iteration's start).
func rateTolFor(b *benchResult) float64 {
	if b.Duration <= 0 {
		return rateTol
	}
	slowest, _ := b.metric("http_req_duration", "max")
	return rateTol + slowest/1000/b.Duration
}

// capacityFigures are each capacity search's result in bench.json beside the curves'
// dashboard's table: the rate held, and its p99, exactly (both are the search's own step, one
// point each).
func (r *grafanaRun) capacityFigures(t *testing.T, d Dashboard) []figure {
	saved, err := report.Load(r.results)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Capacity) == 0 {
		t.Fatal("bench.json holds no capacity search: the bench ran none")
	}
	dash := r.tableValues(t, d, "Capacity at the goal, per protocol")
	var figs []figure
	for _, c := range saved.Capacity {
		if c.Rate == 0 {
			continue // "none at this goal": no row
		}
		for _, f := range []struct {
			col  string
			want float64
		}{{"capacity req/s", float64(c.Rate)}, {"p99 ms", c.P99}} {
			v, ok := dash[cellKey{f.col, c.Target, c.Proto}]
			figs = append(figs, figure{
				cell: c.Target + " capacity-" + c.Proto, name: f.col, dashboard: v, result: f.want,
				floor: 1e-9, why: "exact: the step's own point", missingDash: !ok,
			})
		}
	}
	return figs
}

// sweepFigures are the sweeps' points in bench.json beside the curves dashboard's tables:
// each idle run's KiB per connection, each connections level's req/s, p99 and RSS, each body
// point's MB/s and req/s, exactly (each is its run's own point).
func (r *grafanaRun) sweepFigures(t *testing.T, d Dashboard) []figure {
	saved, err := report.Load(r.results)
	if err != nil {
		t.Fatal(err)
	}
	var figs []figure
	add := func(dash map[cellKey]float64, target, point, col string, want float64) {
		v, ok := dash[cellKey{col, target, point}]
		figs = append(figs, figure{
			cell: target + " " + point, name: col, dashboard: v, result: want,
			floor: 1e-9, why: "exact: the run's own point", missingDash: !ok,
		})
	}
	point := func(proto string, x float64, dir string) string {
		return SweepPoint{Proto: proto, X: x, Direction: dir}.Point()
	}
	idle := r.tableValues(t, d, "Memory per idle connection")
	for _, c := range saved.Cells {
		if c.Mode != "idle" || len(c.Runs) == 0 || c.Runs[0].IdleCost == nil {
			continue
		}
		cost := c.Runs[0].IdleCost
		add(idle, c.Target, point(c.Proto, cost.ConnectionsHeld, ""), "KiB per idle connection", cost.KiBPerConnection)
	}
	conns := r.tableValues(t, d, "Connections sweep")
	for _, p := range saved.Connections {
		at := point(p.Proto, float64(p.Connections), "")
		add(conns, p.Target, at, "req/s", p.RPS)
		add(conns, p.Target, at, "p99 ms", p.P99)
		add(conns, p.Target, at, "RSS MiB", p.RSSPeakMB)
	}
	bodies := r.tableValues(t, d, "Body sizes")
	for _, c := range saved.Bodies {
		if c.NoProto != "" || c.MBPerS == nil || c.RPS == nil {
			continue
		}
		at := point(c.Proto, c.Bytes, c.Direction)
		add(bodies, c.Target, at, "MB/s", *c.MBPerS)
		add(bodies, c.Target, at, "req/s", *c.RPS)
	}
	if len(figs) == 0 {
		t.Fatal("bench.json holds no sweep point: the bench ran no sweep")
	}
	return figs
}

func newFigure(b *benchResult, name string, dash map[cellKey]float64, col string, want float64, have bool, tol, floor float64, why string) figure {
	v, ok := dash[cellKey{col, b.Target, b.tag()}]
	return figure{
		cell: b.Target + " " + b.tag(), name: name, dashboard: v, result: want,
		tolerance: tol, floor: floor, why: why, missingDash: !ok, missing: !have,
	}
}

func allowed(f figure) string {
	switch {
	case f.atMost:
		return fmt.Sprintf("≤ +%g%%", 100*f.tolerance)
	case f.tolerance == 0 && f.floor < 1e-3:
		return "exact"
	case f.floor > 0:
		return fmt.Sprintf("±%.3g%% +%g", 100*f.tolerance, f.floor)
	}
	return fmt.Sprintf("±%.3g%%", 100*f.tolerance)
}

// series reads what Grafana answered a graph's queries (its aliases applied, at 1 s): each
// series' values by name.
func (r *grafanaRun) series(t *testing.T, d Dashboard, id int) map[string][]float64 {
	t.Helper()
	res := r.answer(t, d, func(p Panel) bool { return p.ID == id })
	out := map[string][]float64{}
	for _, qr := range res {
		for _, f := range qr.Frames {
			for i, fd := range f.Schema.Fields {
				if fd.Type != "number" || i >= len(f.Data.Values) {
					continue
				}
				for _, v := range f.Data.Values[i] {
					if x, ok := v.(float64); ok {
						out[f.Schema.Name] = append(out[f.Schema.Name], x)
					}
				}
			}
		}
	}
	return out
}

// answer is what Grafana answered the queries of d's panel that match.
func (r *grafanaRun) answer(t *testing.T, d Dashboard, match func(Panel) bool) map[string]QueryResult {
	t.Helper()
	for _, p := range Flatten(d.Panels) {
		if match(p) {
			res, ok := r.answers[d.File][p.ID]
			if !ok {
				t.Fatalf("%s: panel %q was not queried (see queries)", d.File, p.Title)
			}
			return res
		}
	}
	t.Fatalf("%s: no such panel", d.File)
	return nil
}

// liveFigures: the live run's stats against the results, and its bytes received per second
// against the requests of the same second times the result's bytes per request.
func (r *grafanaRun) liveFigures(t *testing.T, live Dashboard, results []*benchResult) []figure {
	var figs []figure
	total, rps := 0.0, 0.0
	var last *benchResult
	for _, b := range results {
		if m, ok := b.K6.Metrics["http_reqs"]; ok {
			total += m.Values["count"]
		}
		if b.Mode != "probe" && (last == nil || b.mod.After(last.mod)) {
			last = b
		}
	}
	for _, v := range r.series(t, live, 2) {
		for _, x := range v {
			rps += x // one series, one value: the sum of every request of the testid
		}
	}
	figs = append(figs, figure{cell: "all cells", name: "live: Requests", dashboard: rps, result: total, why: "exact: every request of every k6 run"})
	if last != nil {
		stat := r.series(t, live, 1)
		var v []float64
		for _, s := range stat {
			v = s
		}
		figs = append(figs, figure{
			cell: last.Target + " " + last.tag() + " (the last run)", name: "live: Requests per second",
			dashboard: lastOf(v), result: last.RPS, tolerance: 0.25, missingDash: len(v) == 0, info: true,
			why: "not asserted: a 4 s run's median 1 s rate against its mean was 2-41% off on a loaded 2-CPU machine",
		})
	}
	reqs, bytes := r.series(t, live, 5), r.series(t, live, 8)
	// the live run draws every run as it goes, a sweep's among them: a connections level runs
	// the reused cell's scenario, whose series then holds both
	swept := map[string]bool{}
	for _, b := range results {
		if b.Config.Point != "" {
			swept[b.Target+" "+b.tag()] = true
		}
	}
	for _, b := range results {
		if b.Mode != "reused" && b.Mode != "fresh" || swept[b.Target+" "+b.tag()] {
			continue
		}
		name := b.Target + " " + b.tag()
		n, nok := b.K6.Metrics["http_reqs"]
		d, dok := b.K6.Metrics["data_received"]
		if !nok || !dok || n.Values["count"] == 0 {
			continue
		}
		perReq := d.Values["count"] / n.Values["count"]
		sum := func(v []float64) float64 {
			t := 0.0
			for _, x := range v {
				t += x
			}
			return t
		}
		figs = append(figs, figure{
			cell: name, name: "live: data received, all its 1 s windows (B)", dashboard: sum(bytes[name]),
			result: perReq * sum(reqs[name]), tolerance: bytesTotalTol, missingDash: len(bytes[name]) == 0,
			missing: len(reqs[name]) == 0, why: "the scenario's bytes against its requests × the result's bytes per request",
		}, figure{
			cell: name, name: "live: peak 1 s data received B/s (at most)", dashboard: slices.Max(append(bytes[name], 0)),
			result: perReq * slices.Max(append(reqs[name], 0)), tolerance: bytesTol, atMost: true,
			missingDash: len(bytes[name]) == 0, missing: len(reqs[name]) == 0,
			why: "no second shows more bytes than its peak second's requests could bring (lumps did: 7x)",
		})
	}
	return figs
}

func lastOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[len(v)-1]
}

// render opens every dashboard in headless Chromium as a user does (the run's testid, the
// last 30 minutes; the comparison on the run's window, as make bench prints it), waits until Grafana has drawn it, saves a screenshot and checks the page.
func (r *grafanaRun) render(t *testing.T, dashboards []Dashboard) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (%v): `make test-deps` (report/install-chromium.sh)", err)
	}
	dir := filepath.Join(r.results, "dashboards")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	type view struct {
		d          Dashboard
		page, shot string
	}
	var views []view
	for _, d := range dashboards {
		page := r.grafana.URL() + "/d/" + d.UID + "?orgId=1&kiosk&from=now-30m&to=now&var-testid=" + r.testid
		if d.UID == ComparisonUID || d.UID == CurvesUID {
			// the URLs make bench prints: the run's own window, which every panel must fill
			page = DashboardURL(r.grafana.URL(), d.UID, r.testid, r.from, r.to) + "&kiosk"
		}
		views = append(views, view{d, page, filepath.Join(dir, strings.TrimSuffix(d.File, ".json")+".png")})
		if d.File == "proxy-comparison.json" {
			// every testid at once, as a user comparing a Docker stack's runs picks them
			views = append(views, view{d, strings.Replace(page, "var-testid="+r.testid, "var-testid=$__all", 1), filepath.Join(dir, "proxy-comparison-all-testids.png")})
		}
	}
	for _, v := range views {
		d, page, shot := v.d, v.page, v.shot
		height := 0
		for _, p := range Flatten(d.Panels) {
			height = max(height, p.GridPos.Y+p.GridPos.H)
		}
		// a grid row is 30 px and 8 between: every panel in view, as Grafana draws only those
		c := startChromium(t, browser, 1600, 38*height+60)
		t0 := time.Now()
		problems := PageProblems(c.load(t, page, shot, 90*time.Second))
		// Grafana 9.3 now and then leaves one panel with an error or "No data" that a reload
		// does not show (a race between the variables and the panels' first queries, seen once
		// in a few loads; in one CI run on two loads in a row: "Failed to execute 'json' on
		// 'Response': Unexpected end of JSON input", a query cut off): said, and read again as
		// a user would, up to twice. A panel wrong on three loads in a row is wrong.
		for load := 2; len(problems) > 0 && load <= dashboardLoads; load++ {
			t.Logf("%s: load %d of %d: %v; loaded again", d.File, load-1, dashboardLoads, problems)
			problems = PageProblems(c.load(t, page, shot, 90*time.Second))
		}
		c.close()
		for _, problem := range problems {
			t.Errorf("%s (%s): %s", d.File, shot, problem)
		}
		t.Logf("%s: %s (drawn in %v)", d.Title, shot, time.Since(t0).Round(100*time.Millisecond))
	}
}
