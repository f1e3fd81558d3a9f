// Package report turns a benchmark's saved results (results/<testid>/) into report.md and a
// self-contained report.html, and compares two benchmarks cell by cell.
//
// The saved run is bench.json (Bench), which the runner writes; when it is missing, Build
// rebuilds a Bench from the per-run result files alone (without resources or a manifest,
// which only the runner knows).
package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/internal/calibrate"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
	"github.com/proxybench/proxybench/verdict"
)

// BenchFile is the saved run's name in results/<testid>/.
const BenchFile = "bench.json"

// Bench is one benchmark: every cell of the matrix with its runs, the equal-load pass and the
// manifest of what ran where.
type Bench struct {
	Schema   int       `json:"schema"` // 1
	TestID   string    `json:"testid"`
	Profile  string    `json:"profile"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Manifest: what ran where (k6_version, proxies, proxy_sha256, kernel, cpu_model, cpus,
	// config_hashes, profile, pinning, git_commit; engine/manifest.go writes it).
	Manifest map[string]any `json:"manifest,omitempty"`
	// Settings are the scenario knobs the runs reported (their result's `config`): duration,
	// warmup, connections, streams, requests, fresh_connections, fresh_duration, samples, upload_bytes. Values
	// that differ between runs are joined with ", ".
	Settings  map[string]string `json:"settings,omitempty"`
	Cells     []Cell            `json:"cells"`
	EqualLoad []EqualLoadCell   `json:"equal_load"`
	// Capacity is each target's capacity at the latency goal, per protocol (engine's search);
	// only bench.json keeps it (a bench rebuilt from the result files has none).
	Capacity []CapacityCell `json:"capacity,omitempty"`
	// Connections are the connections sweep's points (engine's pass), only in bench.json too.
	Connections []ConnectionsPoint `json:"connections,omitempty"`
	// Bodies are the body-size sweep's points (MODES=bodies), one per run (bodies.go).
	Bodies []BodyCell `json:"bodies,omitempty"`
	// Unreadable are the results (or files claiming to be: a truncated one, another schema) that
	// could not be read: left out of every figure and listed, so the report says what it lacks.
	Unreadable []Unreadable `json:"unreadable,omitempty"`
	// Calibration is the client's ceiling, measured at the start of the bench: k6 and the
	// native peers (wrk, h2load) on the same short load against direct (runner.Calibrate).
	Calibration []*calibrate.Calibration `json:"calibration,omitempty"`
}

// Unreadable is one result file a rebuilt bench left out, and why.
type Unreadable struct {
	File  string `json:"file"`  // relative to the bench's folder
	Error string `json:"error"` // names the file, with line:column where JSON says (path:1:2345: …)
}

// Cell is one scenario against one target over one protocol, over its repeated runs.
// Summaries and Resources come from the valid runs only; invalid runs are kept in Runs and
// listed in Invalid, never averaged in. One invalid run makes the whole cell invalid: a
// median of the runs that happened to pass would flatter a target that fails now and then,
// so such a cell gets no rank, no chart bar and no VsDirect, and its valid runs stay listed.
type Cell struct {
	Scenario string `json:"scenario"`
	Target   string `json:"target"`
	Proto    string `json:"proto"`
	Mode     string `json:"mode"` // reused, fresh, probe
	Route    string `json:"route,omitempty"`
	Client   string `json:"client,omitempty"` // what sent its requests (result.Result.Client)
	Runs     []Run  `json:"runs"`

	RPS result.Summary `json:"rps"`    // req/s over the valid runs (throughput cells)
	P50 result.Summary `json:"p50_ms"` // latency p50 over the valid runs
	P99 result.Summary `json:"p99_ms"`
	// UpstreamPer1k is the connections the upstream accepted per 1 000 requests, over the valid
	// runs that recorded it: near 0 in a reused cell whose proxy keeps its upstream pool.
	UpstreamPer1k result.Summary `json:"upstream_conns_per_1k"`
	// UpstreamShare is the requests the upstream answered over those the client completed, over
	// every run that recorded it (valid or not: a cache makes its run invalid).
	UpstreamShare result.Summary `json:"upstream_answered_share"`
	// VsDirect is this cell's median req/s over direct's for the same scenario and protocol
	// (1 for direct itself); nil when either has no valid run or no rate.
	VsDirect  *float64          `json:"vs_direct,omitempty"`
	Resources *sample.Resources `json:"resources,omitempty"` // mean over the valid runs that have one

	Valid   bool     `json:"valid"`   // every run valid (at least one)
	Invalid []string `json:"invalid"` // one reason per invalid run, "run 2: …"
	// NoProto says the cell was not run because its target lacks the protocol ("no h3"):
	// neither valid nor invalid.
	NoProto       string `json:"no_proto,omitempty"`
	NoProtoReason string `json:"no_proto_reason,omitempty"`
}

// Run is one k6 run of a cell.
type Run struct {
	File      string                  `json:"file"` // the result JSON, relative to the bench's folder
	Valid     bool                    `json:"valid"`
	Invalid   []string                `json:"invalid"`
	RPS       *float64                `json:"rps"` // nil for probes
	Requests  float64                 `json:"requests"`
	Failed    float64                 `json:"failed_requests"`
	DurationS float64                 `json:"duration_s"`
	P50       float64                 `json:"p50_ms"`
	P95       float64                 `json:"p95_ms"`
	P99       float64                 `json:"p99_ms"`
	TTFBP50   float64                 `json:"ttfb_p50_ms"`
	Extra     map[string]result.Stats `json:"extra"`
	// ChecksFailed, NewConnections and ProtosSeen are the run's counts, shown beside its
	// figures (they say why a run is invalid); Cost its CPU per request as the runner recorded it.
	ChecksFailed   float64            `json:"checks_failed,omitempty"`
	NewConnections *float64           `json:"new_connections,omitempty"`
	ProtosSeen     map[string]float64 `json:"protos_seen,omitempty"`
	Cost           *result.Cost       `json:"cost,omitempty"`
	Resources      *sample.Resources  `json:"resources,omitempty"`
	// UpstreamConns is what the upstream accepted during the run (result.UpstreamConns).
	UpstreamConns *result.UpstreamConns `json:"upstream_conns,omitempty"`
	// UpstreamRequests is what the upstream answered beside what the client completed.
	UpstreamRequests *verdict.Upstream `json:"upstream_requests,omitempty"`
	// Pacing is a paced probe's rule and stalls (stream, sse); OutsideLoad the machine's CPU
	// other processes used during the run (result.Result's).
	Pacing      *verdict.Pacing     `json:"pacing,omitempty"`
	OutsideLoad *result.OutsideLoad `json:"outside_load,omitempty"`
	// IdlePlanned and IdleCost are an idle run's: the connections it set out to hold, and what
	// holding them cost the target (result.IdleCost; nil: not sampled).
	IdlePlanned float64          `json:"idle_connections,omitempty"`
	IdleCost    *result.IdleCost `json:"idle_cost,omitempty"`
	// Dashboard is k6's web dashboard HTML export of this run (K6_WEB_DASHBOARD_EXPORT),
	// relative to the bench's folder, when one was made.
	Dashboard string `json:"dashboard,omitempty"`
}

// EqualLoadCell is one target at the equal offered load (open model, constant arrival rate).
type EqualLoadCell struct {
	Target   string  `json:"target"`
	Proto    string  `json:"proto"`
	RateRPS  float64 `json:"rate_rps"`
	Requests float64 `json:"requests"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	// StartLagP99 is the client's own lateness: the p99 of how long after it was due a request
	// left (the native open model's start_lag; 0 when the client does not record it). Two p99s
	// closer than that are not told apart (equalLoadLines).
	StartLagP99 float64 `json:"start_lag_p99_ms,omitempty"`
	Dropped     float64 `json:"dropped"` // dropped iterations: the target could not keep up
	// Overload says the target could not sustain the rate (dropped iterations): a result of
	// the cell, shown as such, not a reason it is invalid.
	Overload string `json:"overload,omitempty"`
	// ClientBound says direct, the upstream alone, could not sustain the rate either: the
	// client could not hold it, and no target's overload at it counts against the target.
	ClientBound bool     `json:"client_bound,omitempty"`
	Run         int      `json:"run,omitempty"` // 1, 2, … when the pass ran more than once
	Valid       bool     `json:"valid"`
	Invalid     []string `json:"invalid"`
	File        string   `json:"file,omitempty"`
}

// New starts a Bench; the runner then Adds every run, and Finishes it once the matrix is done.
func New(testid, profile string, manifest map[string]any) *Bench {
	return &Bench{Schema: 1, TestID: testid, Profile: profile, Started: time.Now().UTC(), Manifest: manifest}
}

// EqualLoadMode is the `mode` of an equal-load result file.
const EqualLoadMode = runner.EqualLoadMode

// AddFile adds the run whose result file is path (relative names are kept relative to dir),
// with the resources the runner sampled for it (nil when none).
func (b *Bench) AddFile(dir, path string, res *sample.Resources) error {
	rf, err := loadRun(path)
	if err != nil {
		return err
	}
	b.addIn(dir, path, rf, res)
	return nil
}

// relTo is path relative to dir when it is inside it, else path as given.
func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// DashboardFile is where a run's k6 web dashboard export goes, beside its result file:
// K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_EXPORT=<DashboardFile(result)>. The report links it.
func DashboardFile(resultPath string) string {
	return strings.TrimSuffix(resultPath, ".json") + ".dashboard.html"
}

// Add adds one run from its in-memory result (runner.Run's); file is its result JSON relative
// to the bench's folder. A result with Err (k6 wrote nothing) is an invalid run.
func (b *Bench) Add(file string, r *result.Result, res *sample.Resources) {
	b.add(file, &runFile{Result: r}, res)
}

// AddEqualLoad adds one equal-load cell.
func (b *Bench) AddEqualLoad(c EqualLoadCell) {
	b.EqualLoad = append(b.EqualLoad, c)
}

func (b *Bench) addIn(dir, path string, rf *runFile, res *sample.Resources) {
	if rf.Dashboard != "" && filepath.IsAbs(rf.Dashboard) == filepath.IsAbs(path) {
		rf.Dashboard = relTo(dir, rf.Dashboard)
	}
	b.add(relTo(dir, path), rf, res)
}

func (b *Bench) add(file string, rf *runFile, res *sample.Resources) {
	r := rf.Result
	if b.TestID == "" {
		b.TestID = r.TestID
	}
	if b.Profile == "" {
		b.Profile = r.Profile
	}
	if b.Schema == 0 {
		b.Schema = 1
	}
	b.addSettings(r.Config)
	if r.Mode == "" {
		// a run that wrote no result, or a skipped cell, of an older proxybench: its mode is
		// its scenario's, so that its cell keeps its row
		r.Mode = runner.ModeOf(r.Scenario)
	}
	if r.Mode == EqualLoadMode {
		b.EqualLoad = append(b.EqualLoad, equalLoadCell(file, rf))
		return
	}
	if r.Mode == BodiesMode {
		b.Bodies = append(b.Bodies, bodyCell(file, rf, res))
		return
	}
	proto := r.Proto
	if proto == "" {
		proto = runner.Job{Scenario: r.Scenario}.Requires()
	}
	c := b.cell(r.Scenario, r.Target, proto)
	if c.Mode == "" {
		c.Mode = r.Mode
	}
	if c.Route == "" {
		c.Route = r.Route
	}
	if c.Client == "" {
		c.Client = r.Client
	}
	if r.Skipped != "" && r.Err == "" {
		c.NoProto, c.NoProtoReason = r.Skipped, r.SkipReason
		return
	}
	run := newRun(file, r, res)
	run.Dashboard = rf.Dashboard
	c.Runs = append(c.Runs, run)
}

func (b *Bench) cell(scenario, target, proto string) *Cell {
	for i := range b.Cells {
		c := &b.Cells[i]
		if c.Scenario == scenario && c.Target == target && c.Proto == proto {
			return c
		}
	}
	b.Cells = append(b.Cells, Cell{Scenario: scenario, Target: target, Proto: proto})
	return &b.Cells[len(b.Cells)-1]
}

func (b *Bench) addSettings(cfg map[string]any) {
	for k, v := range cfg {
		if k == "target_origin" || k == "address" || k == "vus" {
			continue // per target (equal-load's VU pool follows each target's cell), not a setting of the run
		}
		s := fmt.Sprint(v)
		if f, ok := v.(float64); ok {
			s = fmt.Sprint(f) // 262144, not 2.62144e+05
			if f == math.Trunc(f) && math.Abs(f) < 1e15 {
				s = fmt.Sprintf("%.0f", f)
			}
		}
		if b.Settings == nil {
			b.Settings = map[string]string{}
		}
		old, ok := b.Settings[k]
		switch {
		case !ok:
			b.Settings[k] = s
		case !slices.Contains(strings.Split(old, ", "), s):
			b.Settings[k] = old + ", " + s
		}
	}
}

// Finish computes every cell's summaries, validity, vs-direct and mean resources from its
// runs, and sets Finished when it is unset. It can be called again after more Adds.
func (b *Bench) Finish() {
	if b.Finished.IsZero() {
		b.Finished = time.Now().UTC()
	}
	for i := range b.Cells {
		finishCell(&b.Cells[i])
	}
	direct := map[[2]string]float64{}
	for _, c := range b.Cells {
		if c.Target == "direct" && c.Valid && c.RPS.N > 0 && c.RPS.Median > 0 {
			direct[[2]string{c.Scenario, c.Proto}] = c.RPS.Median
		}
	}
	for i := range b.Cells {
		c := &b.Cells[i]
		c.VsDirect = nil
		if d, ok := direct[[2]string{c.Scenario, c.Proto}]; ok && c.Valid && c.RPS.N > 0 {
			v := c.RPS.Median / d
			c.VsDirect = &v
		}
	}
	markClientBound(b.EqualLoad)
	b.sort()
}

// markClientBound marks every equal-load cell of a protocol and run in which direct could not
// sustain the rate: what direct cannot do at it, the client could not.
func markClientBound(cells []EqualLoadCell) {
	type pass struct {
		proto string
		run   int
	}
	bound := map[pass]bool{}
	for _, e := range cells {
		if e.Target == "direct" && e.Valid && e.Overload != "" {
			bound[pass{e.Proto, max(e.Run, 1)}] = true
		}
	}
	for i := range cells {
		cells[i].ClientBound = bound[pass{cells[i].Proto, max(cells[i].Run, 1)}]
	}
}

func finishCell(c *Cell) {
	var rps, p50, p99, per1k []float64
	var res []*sample.Resources
	c.Invalid = nil
	var shares []float64
	for _, r := range c.Runs {
		if r.UpstreamRequests != nil && r.UpstreamRequests.Completed > 0 {
			shares = append(shares, r.UpstreamRequests.Share)
		}
	}
	c.UpstreamShare = result.Summarize(shares)
	for i, r := range c.Runs {
		if !r.Valid {
			label := "run"
			if len(c.Runs) > 1 {
				label = fmt.Sprintf("run %d of %d", i+1, len(c.Runs))
			}
			c.Invalid = append(c.Invalid, label+": "+strings.Join(r.Invalid, "; "))
			continue
		}
		if r.RPS != nil {
			rps = append(rps, *r.RPS)
		}
		p50 = append(p50, r.P50)
		p99 = append(p99, r.P99)
		if r.UpstreamConns != nil {
			per1k = append(per1k, r.UpstreamConns.Per1k)
		}
		if r.Resources != nil {
			res = append(res, r.Resources)
		}
	}
	c.RPS, c.P50, c.P99 = result.Summarize(rps), result.Summarize(p50), result.Summarize(p99)
	c.UpstreamPer1k = result.Summarize(per1k)
	c.Valid = c.NoProto == "" && c.P50.N > 0 && len(c.Invalid) == 0
	c.Resources = MeanResources(res)
}

// ValidRuns counts the cell's valid runs.
func (c *Cell) ValidRuns() int {
	n := 0
	for _, r := range c.Runs {
		if r.Valid {
			n++
		}
	}
	return n
}

// MeanResources is the mean of rs, field by field, except RSSPeakMB and TargetProcs (the
// largest: a peak is a peak), ClientBound (any run: the flag must not average away),
// Samples (the total) and the load-phase CPU pair (only when every run had a load phase: a
// mean of phases and whole lives would be neither). nil for no input.
func MeanResources(rs []*sample.Resources) *sample.Resources {
	if len(rs) == 0 {
		return nil
	}
	var m sample.Resources
	n := float64(len(rs))
	phases := true
	for _, r := range rs {
		m.TargetCPUSeconds += r.TargetCPUSeconds / n
		m.TargetCPUPerReqMicros += r.TargetCPUPerReqMicros / n
		m.Requests += r.Requests / n
		m.RSSMeanMB += r.RSSMeanMB / n
		m.WallSeconds += r.WallSeconds / n
		m.ClientCPUSeconds += r.ClientCPUSeconds / n
		m.ClientLoadSeconds += r.ClientLoadSeconds / n
		m.ClientIdleCPUSeconds += r.ClientIdleCPUSeconds / n
		m.ClientCPUUtil += r.ClientCPUUtil / n
		m.ClientCPUShare += r.ClientCPUShare / n
		m.RSSPeakMB = math.Max(m.RSSPeakMB, r.RSSPeakMB)
		m.TargetProcs = max(m.TargetProcs, r.TargetProcs)
		m.ClientCPUs = max(m.ClientCPUs, r.ClientCPUs)
		m.ClientBound = m.ClientBound || r.ClientBound
		m.MachineCPUSeconds += r.MachineCPUSeconds / n
		m.OtherCPUSeconds += r.OtherCPUSeconds / n
		m.OtherCPUShare = math.Max(m.OtherCPUShare, r.OtherCPUShare)
		m.OutsideLoad = m.OutsideLoad || r.OutsideLoad
		m.Samples += r.Samples
		m.ClientLoadCPUSeconds += r.ClientLoadCPUSeconds / n
		m.TargetLoadCPUSeconds += r.TargetLoadCPUSeconds / n
		phases = phases && r.ClientLoadCPUSeconds > 0 && r.TargetLoadCPUSeconds > 0
	}
	if !phases {
		m.ClientLoadCPUSeconds, m.TargetLoadCPUSeconds = 0, 0
	}
	return &m
}

// Scenario and protocol order of the report: the matrix's.
func scenarioRank(s string) int {
	for i, t := range runner.Throughput {
		if t.Name == s {
			return i
		}
	}
	for i, p := range runner.Probes {
		if p.Name == s {
			return len(runner.Throughput) + i
		}
	}
	return 1000
}

var protoOrder = []string{"h1", "h1c", "h2", "h3"}

func protoRank(p string) int {
	if i := slices.Index(protoOrder, p); i >= 0 {
		return i
	}
	return len(protoOrder)
}

// Targets lists the bench's targets: direct first, then in the order they first appear.
func (b *Bench) Targets() []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, c := range b.Cells {
		if c.Target == "direct" {
			add("direct")
		}
	}
	for _, c := range b.Cells {
		add(c.Target)
	}
	for _, e := range b.EqualLoad {
		add(e.Target)
	}
	for _, p := range b.Connections {
		add(p.Target)
	}
	for _, c := range b.Bodies {
		add(c.Target)
	}
	return out
}

// sort orders cells by scenario, then protocol, keeping the targets in their order of first
// appearance (the runner's matrix order) with direct first.
func (b *Bench) sort() {
	rank := map[string]int{}
	for i, t := range b.Targets() {
		rank[t] = i
	}
	sort.SliceStable(b.Cells, func(i, j int) bool {
		a, c := b.Cells[i], b.Cells[j]
		if x, y := scenarioRank(a.Scenario), scenarioRank(c.Scenario); x != y {
			return x < y
		}
		if a.Scenario != c.Scenario {
			return a.Scenario < c.Scenario
		}
		if x, y := protoRank(a.Proto), protoRank(c.Proto); x != y {
			return x < y
		}
		return rank[a.Target] < rank[c.Target]
	})
}

// Save writes the bench to dir/bench.json.
func (b *Bench) Save(dir string) error {
	// whole or not at all: a bench saves after every run, and may be killed while it does
	return stack.WriteJSON(filepath.Join(dir, BenchFile), b)
}

// Load reads dir/bench.json.
func Load(dir string) (*Bench, error) {
	data, err := os.ReadFile(filepath.Join(dir, BenchFile))
	if err != nil {
		return nil, err
	}
	var b Bench
	if err := stack.DecodeJSON(filepath.Join(dir, BenchFile), data, &b, false); err != nil {
		// Not rebuilt from the result files behind the user's back: that would drop the
		// resources and the manifest, which only bench.json holds.
		return nil, fmt.Errorf("%w\n(%s is the saved run; restore it, or move it out of %s to rebuild the report from the per-run result files, without resources or manifest)", err, BenchFile, dir)
	}
	if b.Schema != 1 {
		return nil, fmt.Errorf("%s: %s", filepath.Join(dir, BenchFile), result.SchemaMismatch("bench", b.Schema, 1))
	}
	return &b, nil
}

// Build returns the bench of dir: bench.json when there is one, else one rebuilt from the
// per-run result files (every *.json under dir; several runs of a cell are grouped by
// scenario, target and protocol, whatever their file names).
func Build(dir string) (*Bench, error) {
	b, err := Load(dir)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return FromResults(dir)
}

// FromResults rebuilds a bench from the per-run result files under dir alone.
func FromResults(dir string) (*Bench, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "test-artifacts" {
			return filepath.SkipDir
		}
		// a split run's instances (SEGMENTS): their cell is the merged result beside them
		if d.IsDir() && d.Name() == runner.SegmentsDir {
			return filepath.SkipDir
		}
		// a capacity search's steps, a connections sweep's runs: no cell of the bench
		if d.IsDir() && (d.Name() == CapacityDir || d.Name() == ConnectionsDir) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") && d.Name() != BenchFile {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	b := &Bench{Schema: 1}
	for _, f := range files {
		rf, err := loadRun(f)
		if err != nil {
			if !errors.Is(err, result.ErrNotResult) {
				// One bad file does not cost the report every other run: it is left out
				// and listed (Unreadable).
				b.Unreadable = append(b.Unreadable, Unreadable{File: relTo(dir, f), Error: err.Error()})
			}
			continue
		}
		b.addIn(dir, f, rf, nil)
	}
	if len(b.Cells) == 0 && len(b.EqualLoad) == 0 && len(b.Bodies) == 0 {
		if len(b.Unreadable) > 0 {
			return nil, fmt.Errorf("no %s and no readable result file in %s:\n%s", BenchFile, dir, strings.Join(b.UnreadableLines(), "\n"))
		}
		return nil, fmt.Errorf("no %s and no result files in %s", BenchFile, dir)
	}
	if b.TestID == "" {
		b.TestID = filepath.Base(dir)
	}
	// Without the runner's matrix order: direct first, then the targets by name.
	sort.SliceStable(b.Cells, func(i, j int) bool {
		x, y := b.Cells[i].Target, b.Cells[j].Target
		if (x == "direct") != (y == "direct") {
			return x == "direct"
		}
		return x < y
	})
	b.Finish()
	b.Finished = time.Time{} // a rebuilt bench does not know when it finished
	return b, nil
}

// runFile is a result file as the report reads it: the result (result.LoadResult, the one
// reader), and k6's web dashboard export beside it when one was made.
type runFile struct {
	*result.Result
	Dashboard string
}

// loadRun reads a result file (result.LoadResult: one that is JSON but plainly no result is
// result.ErrNotResult, skipped in silence) and finds its dashboard export.
func loadRun(path string) (*runFile, error) {
	r, err := result.LoadResult(path)
	if err != nil {
		return nil, err
	}
	rf := &runFile{Result: r}
	if _, err := os.Stat(DashboardFile(path)); err == nil {
		rf.Dashboard = DashboardFile(path) // made relative to the bench's folder by add
	}
	return rf, nil
}

// UnreadableLines are the files the bench left out, one line each, with why.
func (b *Bench) UnreadableLines() []string {
	out := make([]string, len(b.Unreadable))
	for i, u := range b.Unreadable {
		out[i] = "  " + u.Error
	}
	return out
}

// WarnUnreadable writes to w what b left out (nothing when it left nothing out): who is the
// command ("report", "compare: B"), dir the bench's folder and again the command to run once
// the files are dealt with.
func WarnUnreadable(w io.Writer, who, dir string, b *Bench, again string) {
	if len(b.Unreadable) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: warning: %d result file(s) of %s could not be read; every other run is counted, these are left out:\n%s\n",
		who, len(b.Unreadable), dir, strings.Join(b.UnreadableLines(), "\n"))
	fmt.Fprintf(w, "%s: their runs are not measured: run those cells again, or move the files out of %s, then %s\n", who, dir, again)
}

// runFileRE matches the repeat number the runner puts in the name of a run's result file
// after the first (runner.Job.Run).
var runFileRE = regexp.MustCompile(`\.run(\d+)\.json$`)

// runOf is the repeat number of the run whose result file is file: 1 for the first.
func runOf(file string) int {
	if m := runFileRE.FindStringSubmatch(file); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 1
}

func equalLoadCell(file string, rf *runFile) EqualLoadCell {
	r := rf.Result
	var rate float64
	if r.Plan != nil {
		rate = r.Plan.Rate
	}
	e := EqualLoadCell{
		Target: r.Target, Proto: r.Proto, RateRPS: rate, Requests: r.Requests,
		P50: r.Latency.P50, P99: r.Latency.P99, P999: r.Latency.P999, Dropped: r.DroppedIterations, Overload: r.Overload,
		StartLagP99: r.Extra["start_lag"].P99,
		Valid:       r.Valid && r.Err == "", Invalid: append([]string{}, r.Invalid...), File: file, Run: runOf(file),
	}
	if r.Err != "" {
		e.Invalid = append(e.Invalid, r.Err)
	}
	return e
}

// newRun is one run as a cell keeps it: its figures and counts from its result, what it cost
// (nil: not sampled) and the reasons it is invalid, k6's failure to write a result among them.
func newRun(file string, r *result.Result, res *sample.Resources) Run {
	run := Run{
		File: file, Valid: r.Valid && r.Err == "", Invalid: append([]string{}, r.Invalid...),
		RPS: r.RPS, Requests: r.Requests, Failed: r.FailedRequests, DurationS: r.DurationS,
		P50: r.Latency.P50, P95: r.Latency.P95, P99: r.Latency.P99, TTFBP50: r.TTFB.P50,
		Extra: r.Extra, Resources: res, UpstreamConns: r.UpstreamConns,
		UpstreamRequests: r.UpstreamRequests, Pacing: r.Pacing, OutsideLoad: r.OutsideLoad,
		ChecksFailed: r.Checks.Fails, NewConnections: r.NewConnections, ProtosSeen: r.ProtosSeen, Cost: r.Cost,
	}
	if r.Idle != nil {
		run.IdlePlanned, run.IdleCost = r.Idle.Connections, r.IdleCost
	}
	if r.Err != "" {
		run.Invalid = append(run.Invalid, r.Err)
	}
	if !run.Valid && len(run.Invalid) == 0 {
		run.Invalid = []string{"marked invalid without a reason"}
	}
	return run
}
