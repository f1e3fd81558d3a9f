package influxdb

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"
)

// The dashboards of dashboards/definitions against a split run: the same samples written once
// by a k6 that runs the whole test (testid "whole") and, dealt between them, by the two
// instances of a split one (testid "split": segments 0:1/3 and 1/3:1, the faster latencies on
// one, the slower on the other, and whole-run points stamped in different seconds), through the
// real output into a real InfluxDB 1.8. Every query of the dashboards, taken from their JSON and
// interpolated as Grafana's data source does, must return the same figures for both testids —
// except the per-window percentile lines, which say they are the highest instance's: those
// must be at least the merged figure.
//
// This test lives in the output's module (the root module's observe package has the same
// interpolation, Substitute) because the extensions module can't import the root one.
func TestDashboardsShowSplitRunAsOne(t *testing.T) {
	t.Parallel()
	addr := influxAddr(t)
	db := "split_" + strconv.FormatInt(time.Now().UnixNano(), 10)
	const n = 1800 // requests per target and scenario, a multiple of 3: both instances start and end together
	// the run ends at x.5 s; the slower instance's last sample is 0.7 s later, in the next second
	base := time.Now().Add(-time.Minute).Truncate(time.Second).Add(500*time.Millisecond - 3*time.Second)

	type part struct {
		testid, segment string
		out             *Output
		s               *sampler
	}
	parts := []*part{{testid: "whole"}, {testid: "split", segment: "0:1/3"}, {testid: "split", segment: "1/3:1"}}
	for _, p := range parts {
		logger, _ := test.NewNullLogger()
		var opts lib.Options
		if p.segment != "" {
			seg, err := lib.NewExecutionSegmentFromString(p.segment)
			require.NoError(t, err)
			seq, err := lib.NewExecutionSegmentSequenceFromString("0,1/3,1")
			require.NoError(t, err)
			opts.ExecutionSegment, opts.ExecutionSegmentSequence = seg, &seq
		}
		o, err := newOutput(output.Params{Logger: logger, ConfigArgument: addr + "/" + db, ScriptOptions: opts})
		require.NoError(t, err)
		p.out, p.s = o, newSampler()
	}
	emit := func(p *part, name string, typ metrics.MetricType, at time.Time, v float64, kv ...string) {
		m, err := p.s.reg.NewMetric(name, typ)
		require.NoError(t, err)
		tags := p.s.tags(append([]string{"testid", p.testid}, kv...)...)
		p.out.AddMetricSamples([]metrics.SampleContainer{metrics.Samples{sample(m, tags, at, v)}})
	}
	var exact []float64 // successful http_req_duration of nginx's main scenario
	for _, target := range []string{"nginx", "caddy"} {
		for _, sc := range []struct{ scenario, mode, proto string }{{"main", "reused", "HTTP/2.0"}, {"json-h1c", "probe", "HTTP/1.1"}} {
			for i := range n {
				inst := 1 + min(i%3, 1) // parts[1] gets a third of the requests, parts[2] the rest
				at := base.Add(time.Duration(i/3) * 5 * time.Millisecond)
				v := 0.3 + float64(i%7)/10
				if inst == 2 {
					// the merged p50 falls in the row of this instance's min, whose bounds
					// the instances narrow differently
					v = 4.05 + float64(max(i%11-4, 0))
				}
				status, expected, failed := "200", "true", 0.0
				if i%97 == 5 {
					status, expected, failed = "502", "false", 1
				} else if target == "nginx" && sc.scenario == "main" {
					exact = append(exact, v)
				}
				tags := []string{"target", target, "mode", sc.mode, "scenario", sc.scenario, "proto", sc.proto}
				req := append(slices.Clone(tags), "status", status, "expected_response", expected)
				for _, p := range []*part{parts[0], parts[inst]} {
					emit(p, "http_reqs", metrics.Counter, at, 1, req...)
					emit(p, "http_req_duration", metrics.Trend, at, v, req...)
					emit(p, "http_req_waiting", metrics.Trend, at, v*0.8, req...)
					emit(p, "http_req_failed", metrics.Rate, at, failed, req...)
					emit(p, "checks", metrics.Rate, at, 1-failed, tags...)
					emit(p, "data_received", metrics.Counter, at, 4096, tags...)
					if i%5 == 0 {
						for _, trend := range []string{"sse_first_event", "stream_first_chunk", "ws_connect", "ws_echo"} {
							emit(p, trend, metrics.Trend, at, v*2, tags...)
						}
					}
				}
				if i%60 == 0 { // a gauge is no sum of samples: 10 VUs in the whole test, 3 + 7 split
					for j, vus := range []float64{10, 3, 7} {
						emit(parts[j], "vus", metrics.Gauge, at, vus, "target", target, "mode", sc.mode)
					}
				}
			}
		}
	}
	// the slower instance's last sample comes 0.7 s after the rest: its whole-run points are
	// stamped a second later than the other instance's
	end := base.Add(time.Duration(n/3-1) * 5 * time.Millisecond)
	for _, p := range []*part{parts[0], parts[2]} {
		emit(p, "data_sent", metrics.Counter, end.Add(700*time.Millisecond), 1)
	}
	// started only now: the samples are a minute old, and a flush while they come in would
	// count the rest as late, in another window for each output
	for _, p := range parts {
		require.NoError(t, p.out.Start())
		require.NoError(t, p.out.Stop())
		st := p.out.Stats()
		require.Zero(t, st.Dropped(), "%s %s: %+v", p.testid, p.segment, st)
	}

	from, to := base.Add(-time.Minute), time.Now().Add(time.Minute)
	vars := func(testid, target string) map[string][]string {
		return map[string][]string{
			"testid": {testid}, "target": {target}, "mode": {"reused", "probe"},
			"proto": {"HTTP/1.1", "HTTP/2.0"},
		}
	}
	checked, above := 0, 0
	for _, d := range loadDashboards(t) {
		for _, p := range d.panels() {
			upper := strings.Contains(p.Description, "upper bound")
			for _, q := range p.Targets {
				if runnersPoints(q.Query) {
					continue // the runner's points, one per run or capacity step, not the output's
				}
				for _, target := range []string{"nginx", "caddy"} {
					for _, interval := range []string{"1s", "10s"} {
						where := fmt.Sprintf("%s: panel %q query %s, target %s, $__interval %s", d.file, p.Title, q.RefID, target, interval)
						// the testid tag (grouped by where several testids may be picked) aside: the
						// same figures under both
						whole := flat(querySeries(t, addr, db, substitute(q.Query, vars("whole", target), from, to, interval)), "testid")
						split := flat(querySeries(t, addr, db, substitute(q.Query, vars("split", target), from, to, interval)), "testid")
						require.NotEmpty(t, whole, "%s: no data", where)
						require.Equal(t, slices.Sorted(maps.Keys(whole)), slices.Sorted(maps.Keys(split)), where)
						for k, w := range whole {
							s := split[k]
							if upper {
								assert.GreaterOrEqual(t, s, w*(1-2*histogramRelErr), "%s %s: the highest instance's is below the merged figure", where, k)
								if s > w*(1+2*histogramRelErr) {
									above++
								}
								continue
							}
							assert.InEpsilon(t, w, s, 1e-9, "%s %s: whole test %v, split %v", where, k, w, s)
						}
						checked++
					}
				}
			}
		}
	}
	assert.Greater(t, checked, 100)
	assert.Positive(t, above, "the instances' latencies differ: some window's highest instance must be above the merged figure")
	t.Logf("%d dashboard queries compared; %d per-window percentiles of the split run above the merged one", checked, above)

	// Several testids picked at once (a Docker stack's runs and a native one, say): every query
	// of the comparison that tells targets apart tells testids apart too, so each testid's rows
	// and series are exactly the ones it has alone, none summed into another's.
	for _, d := range loadDashboards(t) {
		if d.file != "proxy-comparison.json" {
			continue
		}
		multi := 0
		for _, p := range d.panels() {
			for _, q := range p.Targets {
				if !groupsByTarget.MatchString(q.Query) || runnersPoints(q.Query) {
					continue // one without targets' rows (the heatmap), or not the output's points
				}
				where := fmt.Sprintf("%s: panel %q query %s", d.file, p.Title, q.RefID)
				both := vars("whole", "nginx")
				both["testid"] = []string{"whole", "split"}
				got := flat(querySeries(t, addr, db, substitute(q.Query, both, from, to, "1s")))
				want := flat(querySeries(t, addr, db, substitute(q.Query, vars("whole", "nginx"), from, to, "1s")))
				maps.Copy(want, flat(querySeries(t, addr, db, substitute(q.Query, vars("split", "nginx"), from, to, "1s"))))
				require.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)), "%s: two testids picked: each one's series, as alone", where)
				for k, w := range want {
					assert.InEpsilon(t, w, got[k], 1e-9, "%s %s: two testids picked %v, alone %v", where, k, got[k], w)
				}
				multi++
			}
		}
		assert.Greater(t, multi, 10, "proxy-comparison.json: queries checked with two testids picked")
	}

	// and the merged figures are the right ones, not only the same
	slices.Sort(exact)
	table := findQuery(t, "proxy-comparison.json", "Side by side: whole measured run", "E")
	rows := flat(querySeries(t, addr, db, substitute(table, vars("split", "nginx"), from, to, "1s")))
	p99 := math.NaN()
	for k, v := range rows {
		if strings.Contains(k, "scenario=main") {
			p99 = v
		}
	}
	assert.InEpsilon(t, exactQuantile(exact, 0.99), p99, 1.0/(1<<cdfSubBits), "merged p99 of a split run")
	reqs := flat(querySeries(t, addr, db, substitute(findQuery(t, "proxy-comparison.json", "Side by side: whole measured run", "A"),
		vars("split", "nginx"), from, to, "1s")))
	for k, v := range reqs {
		if strings.HasSuffix(k, " requests") {
			assert.Equal(t, float64(n), v, k)
		}
	}
	reused := vars("split", "nginx")
	reused["mode"] = []string{"reused"}
	heat := flat(querySeries(t, addr, db, substitute(findQuery(t, "proxy-comparison.json", "Latency distribution (merged over instances)", "A"),
		reused, from, to, "10s")))
	total := 0.0
	for _, v := range heat {
		total += v
	}
	assert.Equal(t, float64(len(exact)), total, "the heatmap's cells hold every successful request once")
}

// groupsByTarget: a query with a row or series per target.
var groupsByTarget = regexp.MustCompile(`GROUP BY (time\([^)]*\), )?[^)]*"target"`)

// histogramRelErr is the histogram's quantile error (0.2%).
const histogramRelErr = 1.0 / (1 << 9)

// flat lists a query's numbers by series, tags (but those of drop), time and column.
func flat(series []influxSeries, drop ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range series {
		keys := make([]string, 0, len(s.Tags))
		for k, v := range s.Tags {
			if !slices.Contains(drop, k) {
				keys = append(keys, k+"="+v)
			}
		}
		sort.Strings(keys)
		for _, row := range s.Values {
			for i, v := range row {
				f, ok := v.(float64)
				if !ok || s.Columns[i] == "time" {
					continue
				}
				out[fmt.Sprintf("%s{%s} %v %s", s.Name, strings.Join(keys, ","), row[0], s.Columns[i])] = f
			}
		}
	}
	return out
}

// dashboard is what this test reads of a dashboard model.
type dashboard struct {
	file   string
	Panels []dashPanel `json:"panels"`
}

type dashPanel struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Targets     []struct {
		RefID string `json:"refId"`
		Query string `json:"query"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

func (d dashboard) panels() []dashPanel {
	var out []dashPanel
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

func loadDashboards(t *testing.T) []dashboard {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "dashboards", "definitions", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []dashboard
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		d := dashboard{file: filepath.Base(f)}
		require.NoError(t, json.Unmarshal(data, &d), f)
		out = append(out, d)
	}
	return out
}

func findQuery(t *testing.T, file, title, refID string) string {
	t.Helper()
	for _, d := range loadDashboards(t) {
		for _, p := range d.panels() {
			for _, q := range p.Targets {
				if d.file == file && p.Title == title && q.RefID == refID {
					return q.Query
				}
			}
		}
	}
	t.Fatalf("%s has no panel %q with query %s", file, title, refID)
	return ""
}

var regexMeta = regexp.MustCompile(`[\\^$*+?.()|{}\[\]/]`)

// substitute interpolates a query as Grafana's InfluxDB data source does (the same as the
// root module's observe.Substitute): $timeFilter, $__interval, and each variable inside a
// regex as its escaped value, (a|b) when several are selected.
func substitute(q string, values map[string][]string, from, to time.Time, interval string) string {
	q = strings.ReplaceAll(q, "$timeFilter", fmt.Sprintf("time >= %dms and time <= %dms", from.UnixMilli(), to.UnixMilli()))
	q = strings.ReplaceAll(q, "$__interval", interval)
	names := slices.Collect(maps.Keys(values))
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	for _, n := range names {
		vals := make([]string, 0, len(values[n]))
		for _, v := range values[n] {
			vals = append(vals, regexMeta.ReplaceAllString(v, `\$0`))
		}
		rep := strings.Join(vals, "|")
		if len(vals) > 1 {
			rep = "(" + rep + ")"
		}
		q = strings.ReplaceAll(q, "${"+n+"}", rep)
		q = strings.ReplaceAll(q, "$"+n, rep)
	}
	return q
}

// runnersPoints tells whether query reads the points make bench writes itself (resources, one
// per run; capacity steps; sweeps' points), which a k6 run through this output never writes.
func runnersPoints(query string) bool {
	for _, m := range []string{"proxybench_resources", "proxybench_capacity", "proxybench_sweep"} {
		if strings.Contains(query, m) {
			return true
		}
	}
	return false
}
