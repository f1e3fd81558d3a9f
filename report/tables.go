package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/runner"
)

// table is one table of the report, rendered alike as Markdown and as HTML.
type table struct {
	ID    string // HTML anchor
	Title string
	Intro string // a paragraph under the title
	Head  []string
	Rows  []row
	Notes []string // lines under the table
	Empty string   // said instead of the table when it has no rows
	Links []int    // columns holding a file beside the report, linked in HTML and Markdown
	KV    bool     // a key/value table: text that wraps, nothing right-aligned
}

// row is a table row; Class marks it for HTML ("invalid", "noproto", "bound", "baseline").
type row struct {
	Cells []string
	Class string
}

// Row classes.
const (
	classInvalid  = "invalid"
	classNoProto  = "noproto"
	classBound    = "bound"
	classBaseline = "baseline"
)

// protoLabel names a protocol as a reader knows it.
var protoLabel = map[string]string{
	"h1": "HTTP/1.1 TLS", "h1c": "HTTP/1.1 cleartext", "h2": "HTTP/2 TLS", "h3": "HTTP/3 QUIC",
}

func protoName(p string) string {
	if l, ok := protoLabel[p]; ok {
		return l
	}
	return p
}

// sections builds every table of the report, in order.
func sections(b *Bench) []table {
	return []table{
		runDetails(b),
		throughputTable(b, "reused"),
		throughputTable(b, "fresh"),
		probeTable(b),
		sseTable(b),
		wsTable(b),
		spreadTable(b),
		resourcesTable(b),
		clientTable(b),
		equalLoadTable(b),
		manifestTable(b),
		runsTable(b),
	}
}

// cellsOf returns the cells of one mode (reused, fresh) or scenario.
func (b *Bench) cellsOf(pred func(c *Cell) bool) []*Cell {
	var out []*Cell
	for i := range b.Cells {
		if pred(&b.Cells[i]) {
			out = append(out, &b.Cells[i])
		}
	}
	return out
}

func isThroughput(c *Cell) bool { return c.Mode == "reused" || c.Mode == "fresh" }

// CPUs is the manifest's CPU count, 0 when unknown.
func (b *Bench) CPUs() int {
	switch v := b.Manifest["cpus"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

// shareLine is the sentence every report carries: the numbers are relative to this machine.
func shareLine(b *Bench) string {
	pin := manifestString(b, "pinning")
	switch n := b.CPUs(); {
	case n > 0 && (pin == "" || pin == "none"):
		return fmt.Sprintf("Client, proxies and upstream share %d CPUs (no pinning): compare targets with each other on this machine, not with other machines.", n)
	case n > 0:
		return fmt.Sprintf("Client, proxies and upstream run on %d CPUs, pinned: %s.", n, pin)
	default:
		return "Client, proxies and upstream share this machine's CPUs (their number was not recorded: no manifest); compare targets with each other, not with other machines."
	}
}

func manifestString(b *Bench, key string) string {
	v, ok := b.Manifest[key]
	if !ok || v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func runDetails(b *Bench) table {
	t := table{ID: "details", Title: "Run details", Head: []string{"setting", "value"}, KV: true}
	add := func(k, v string) {
		if v != "" {
			t.Rows = append(t.Rows, row{Cells: []string{k, v}})
		}
	}
	add("Test id", b.TestID)
	add("Profile", b.Profile)
	if !b.Started.IsZero() {
		add("Started", b.Started.UTC().Format(time.RFC3339))
	}
	if !b.Finished.IsZero() {
		d := ""
		if !b.Started.IsZero() {
			d = fmt.Sprintf(" (%v)", b.Finished.Sub(b.Started).Round(time.Second))
		}
		add("Finished", b.Finished.UTC().Format(time.RFC3339)+d)
	}
	s := b.Settings
	add("Reused: duration", s["duration"])
	add("Reused: warm-up (excluded)", s["warmup"])
	add("Reused: connections", s["connections"])
	add("HTTP/2 and HTTP/3 streams per connection", s["streams"])
	add("Fresh: requests (one connection each)", s["requests"])
	add("Fresh: concurrent connections", s["fresh_connections"])
	add("Probe samples", s["samples"])
	if v := s["upload_bytes"]; v != "" {
		if n, err := strconv.Atoi(v); err == nil && n%1024 == 0 {
			v = fmt.Sprintf("%d KiB", n/1024)
		}
		add("Upload probe body", v)
	}
	if r := b.maxRuns(); r > 0 {
		add("Runs per throughput cell", strconv.Itoa(r))
	}
	machine := strings.TrimSpace(strings.Join(nonEmpty(manifestString(b, "cpu_model"), cpusText(b), manifestString(b, "kernel")), ", "))
	add("Machine", machine)
	add("CPU pinning", manifestString(b, "pinning"))
	switch b.Manifest["restart_between_runs"] {
	case true:
		add("Targets", "restarted before each run (RESTART=1)")
	case false:
		add("Targets", "started once for the whole bench")
	}
	if n := b.CPUs(); n > 0 {
		add("CPUs shared by client, proxies and upstream", strconv.Itoa(n))
	} else {
		add("CPUs shared by client, proxies and upstream", "not recorded (no manifest)")
	}
	return t
}

func cpusText(b *Bench) string {
	if n := b.CPUs(); n > 0 {
		return fmt.Sprintf("%d CPUs", n)
	}
	return ""
}

func nonEmpty(xs ...string) []string {
	var out []string
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func (b *Bench) maxRuns() int {
	n := 0
	for _, c := range b.Cells {
		if isThroughput(&c) {
			n = max(n, len(c.Runs))
		}
	}
	return n
}

// manifestTable lists the manifest, nested maps flattened to "a.b".
func manifestTable(b *Bench) table {
	t := table{
		ID: "manifest", Title: "Manifest", Head: []string{"key", "value"}, KV: true,
		Empty: "No manifest: this report was rebuilt from the per-run result files alone.",
	}
	flat := map[string]string{}
	flatten("", b.Manifest, flat)
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Rows = append(t.Rows, row{Cells: []string{k, flat[k]}})
	}
	return t
}

func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, e, out)
		}
	case map[string]string:
		for k, e := range x {
			flatten(prefix+"."+k, e, out)
		}
	case nil:
		if prefix != "" {
			out[prefix] = ""
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			out[prefix] = strconv.FormatFloat(x, 'f', 0, 64)
		} else {
			out[prefix] = strconv.FormatFloat(x, 'g', -1, 64)
		}
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		out[prefix] = strings.Join(parts, ", ")
	default:
		out[prefix] = fmt.Sprint(x)
	}
}

// validText is a cell's "valid" column: yes, NO, the missing protocol, and how many runs
// made it invalid when some passed.
func validText(c *Cell) (string, string) {
	switch {
	case c.NoProto != "":
		return c.NoProto, classNoProto
	case !c.Valid && c.ValidRuns() > 0:
		return fmt.Sprintf("NO (%d of %d runs invalid)", len(c.Runs)-c.ValidRuns(), len(c.Runs)), classInvalid
	case !c.Valid:
		return "NO", classInvalid
	}
	return "yes", ""
}

func throughputTable(b *Bench, mode string) table {
	t := table{ID: mode, Head: []string{"protocol", "target", "req/s (median)", "CV %", "runs", "vs direct", "p50 ms", "p99 ms"}}
	cells := b.cellsOf(func(c *Cell) bool { return c.Mode == mode })
	if mode == "reused" {
		t.Title = "Reused-connection throughput"
		t.Intro = "Steady state over keep-alive connections (HTTP/2 and HTTP/3: several streams per connection); warm-up excluded. " +
			"req/s is the median over the valid runs, CV the coefficient of variation between them, vs direct the fraction of the bare upstream's req/s (the client's ceiling on this machine) for the same protocol."
	} else {
		t.Title = "Fresh-connection throughput"
		t.Intro = "One request per brand-new connection (full TCP/TLS or QUIC handshake), verified: connections opened = requests. " +
			"Mostly handshake and accept-loop cost."
		t.Head = append(t.Head, "connect p50 ms", "TLS p50 ms")
	}
	t.Head = append(t.Head, "client CPU share", "upstream conns /1k req", "valid")
	t.Empty = "No " + mode + "-connection cells in this bench."
	t.Notes = append(t.Notes, "client CPU share: the client's part of all the CPU used on its CPUs while its load ran (as in the resources table): the higher, the more its req/s is the client's ceiling rather than the target's; with \"client-bound\" nothing was left idle either.")
	t.Notes = append(t.Notes, "upstream conns /1k req: connections the upstream accepted per 1 000 requests sent (warm-up included), median over the valid runs: "+
		"a proxy's upstream connections (near 0 when its pool keeps them), or for direct the client's own.")
	for _, c := range cells {
		v, class := validText(c)
		if class == "" && c.Target == "direct" {
			class = classBaseline
		}
		if c.Valid && c.Resources != nil && c.Resources.ClientBound {
			// Said where the rate is read: this rate is the client's ceiling.
			v += ", client-bound"
			class = classBound
		}
		if r := c.Resources; mode == "fresh" && c.Valid && r != nil && r.TargetCPUSeconds > 0 && r.ClientCPUSeconds >= ClientHeavy*r.TargetCPUSeconds {
			// the handshakes cost the client more than the target: its rate is the client's
			v += fmt.Sprintf(", client-heavy (k6 used %.1f× the target's CPU)", r.ClientCPUSeconds/r.TargetCPUSeconds)
			class = classBound
		}
		if c.Valid && c.Resources != nil && c.Resources.OutsideLoad {
			v += fmt.Sprintf(", outside load (%.0f%% of the CPU)", c.Resources.OtherCPUShare*100)
			class = classBound
		}
		r := []string{protoName(c.Proto), c.Target}
		if c.Valid && c.RPS.N > 0 {
			r = append(r, fmtInt(c.RPS.Median), cvText(c.RPS), runsText(c), vsText(c), ms(c.P50.Median), ms(c.P99.Median))
		} else {
			r = append(r, "—", "—", runsText(c), "—", "—", "—")
		}
		if mode == "fresh" {
			r = append(r, extraMedian(c, "http_req_connecting"), extraMedian(c, "http_req_tls_handshaking"))
		}
		share := "—"
		if c.Valid && c.Resources != nil && c.Resources.ClientCPUShare > 0 {
			share = fmt.Sprintf("%.0f%%", c.Resources.ClientCPUShare*100)
		}
		up := "—"
		if c.UpstreamPer1k.N > 0 {
			up = strconv.FormatFloat(c.UpstreamPer1k.Median, 'f', 1, 64)
		}
		r = append(r, share, up, v)
		t.Rows = append(t.Rows, row{Cells: r, Class: class})
	}
	if ran := clientsOf(b, mode); ran != "" {
		t.Notes = append(t.Notes, "Client: "+ran+".")
	}
	if slices.ContainsFunc(cells, func(c *Cell) bool { return c.Proto == "h3" }) {
		t.Notes = append(t.Notes, "Compare HTTP/3 with HTTP/3 only: a different client stack (k6/x/proxybench/http3 over quic-go) drives it.")
	}
	return t
}

func runsText(c *Cell) string {
	if c.NoProto != "" {
		return "—"
	}
	return fmt.Sprintf("%d/%d", c.ValidRuns(), len(c.Runs))
}

func cvText(s runner.Summary) string {
	if s.N < 2 {
		return "n=1"
	}
	return fmt.Sprintf("%.1f", s.CVPct)
}

func vsText(c *Cell) string {
	if c.Target == "direct" {
		return "baseline"
	}
	if c.VsDirect == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", *c.VsDirect*100)
}

// extraMedian is the median over the valid runs of an extra trend's p50, "—" without one.
func extraMedian(c *Cell, key string) string {
	var xs []float64
	for _, r := range c.Runs {
		if s, ok := r.Extra[key]; ok && r.Valid {
			xs = append(xs, s.P50)
		}
	}
	if len(xs) == 0 {
		return "—"
	}
	return ms(runner.Summarize(xs).Median)
}

// probeFigure is what a probe table shows for a run: the whole request for /json and /upload,
// the first chunk for /stream and the first event for /sse (what a buffering proxy delays).
func probeFigure(scenario string, r *Run) float64 {
	key := map[string]string{"stream": "stream_first_chunk", "sse": "sse_first_event", "ws": "ws_echo"}[scenario]
	if s, ok := r.Extra[key]; ok && key != "" {
		return s.P50
	}
	if scenario == "stream" || scenario == "sse" {
		return r.TTFBP50
	}
	return r.P50
}

// probeMedian is the median probe figure over the valid runs.
func probeMedian(c *Cell) (float64, bool) {
	var xs []float64
	for i := range c.Runs {
		if c.Runs[i].Valid {
			xs = append(xs, probeFigure(c.Scenario, &c.Runs[i]))
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return runner.Summarize(xs).Median, true
}

// probeValue is a probe cell's entry in a wide table.
func probeValue(c *Cell) (string, string) {
	if c == nil {
		return "—", ""
	}
	if c.NoProto != "" {
		return c.NoProto, classNoProto
	}
	if v, ok := probeMedian(c); ok {
		return ms(v), ""
	}
	return "invalid", classInvalid
}

// wide lays cells of the given scenarios out as one row per target and one column per
// scenario × protocol present.
type wideCol struct{ scenario, proto string }

func (b *Bench) wideCols(scenarios ...string) []wideCol {
	var cols []wideCol
	for _, sc := range scenarios {
		var protos []string
		for _, c := range b.Cells {
			if c.Scenario == sc && !slices.Contains(protos, c.Proto) {
				protos = append(protos, c.Proto)
			}
		}
		sort.SliceStable(protos, func(i, j int) bool { return protoRank(protos[i]) < protoRank(protos[j]) })
		for _, p := range protos {
			cols = append(cols, wideCol{sc, p})
		}
	}
	return cols
}

func (b *Bench) find(scenario, target, proto string) *Cell {
	for i := range b.Cells {
		c := &b.Cells[i]
		if c.Scenario == scenario && c.Target == target && c.Proto == proto {
			return c
		}
	}
	return nil
}

func probeTable(b *Bench) table {
	t := table{
		ID: "probes", Title: "Latency probes",
		Intro: "p50 in ms over each probe's samples (median over runs): /json and /upload the whole request " +
			"(upload sends the body), /stream the first chunk, /sse the first event. One virtual user, in sequence.",
		Empty: "No latency probes in this bench.",
	}
	cols := b.wideCols("json", "upload", "stream", "sse")
	if len(cols) == 0 {
		return t
	}
	t.Head = []string{"target"}
	for _, c := range cols {
		t.Head = append(t.Head, "/"+c.scenario+" "+c.proto)
	}
	for _, tg := range b.Targets() {
		r := row{Cells: []string{tg}}
		found := false
		for _, col := range cols {
			c := b.find(col.scenario, tg, col.proto)
			v, class := probeValue(c)
			found = found || c != nil
			if class == classInvalid {
				r.Class = classInvalid
			}
			r.Cells = append(r.Cells, v)
		}
		if found {
			t.Rows = append(t.Rows, r)
		}
	}
	if slices.ContainsFunc(cols, func(c wideCol) bool { return c.proto == "h3" }) {
		t.Notes = append(t.Notes, "HTTP/3 probes include QUIC connection setup by the probe client.")
	}
	return t
}

// okFail counts a cell's samples that succeeded and failed, over every run (valid or not).
func okFail(c *Cell) string {
	var ok, fail float64
	for _, r := range c.Runs {
		ok += r.Requests - r.Failed
		fail += r.Failed
	}
	return fmt.Sprintf("%.0f / %.0f", ok, fail)
}

// perProtoTable is the SSE or WebSocket table: per target, per protocol: ok/fail and figures.
func perProtoTable(b *Bench, scenario string, figures []string, keys []string) ([]string, []row) {
	cols := b.wideCols(scenario)
	if len(cols) == 0 {
		return nil, nil
	}
	head := []string{"target"}
	for _, col := range cols {
		head = append(head, col.proto+" ok/fail")
		for _, f := range figures {
			head = append(head, col.proto+" "+f)
		}
	}
	var rows []row
	for _, tg := range b.Targets() {
		r := row{Cells: []string{tg}}
		found := false
		for _, col := range cols {
			c := b.find(scenario, tg, col.proto)
			switch {
			case c == nil:
				r.Cells = append(r.Cells, "—")
				for range figures {
					r.Cells = append(r.Cells, "—")
				}
				continue
			case c.NoProto != "":
				found = true
				r.Cells = append(r.Cells, c.NoProto)
				for range figures {
					r.Cells = append(r.Cells, "—")
				}
				continue
			}
			found = true
			r.Cells = append(r.Cells, okFail(c))
			if !c.Valid {
				r.Class = classInvalid
			}
			for _, k := range keys {
				r.Cells = append(r.Cells, extraMedian(c, k))
			}
		}
		if found {
			rows = append(rows, r)
		}
	}
	return head, rows
}

func sseTable(b *Bench) table {
	t := table{
		ID: "sse", Title: "Server-sent events",
		Intro: "GET /sse: ok/fail over every sample; first event = request start to the first whole event (a proxy that buffers shows here), gap = between events; p50 ms.",
		Empty: "No SSE probe in this bench.",
	}
	t.Head, t.Rows = perProtoTable(b, "sse", []string{"first event ms", "gap ms"}, []string{"sse_first_event", "sse_event_gap"})
	return t
}

func wsTable(b *Bench) table {
	t := table{
		ID: "ws", Title: "WebSocket",
		Intro: "wss:// and ws:// /ws: ok/fail over every session; connect = new WebSocket to open (TCP, TLS, upgrade), echo = one message's round trip; p50 ms.",
		Empty: "No WebSocket probe in this bench.",
	}
	t.Head, t.Rows = perProtoTable(b, "ws", []string{"connect ms", "echo ms"}, []string{"ws_connect", "ws_echo"})
	return t
}

func resourcesTable(b *Bench) table {
	t := table{
		ID: "resources", Title: "Resources",
		Intro: "Sampled from /proc every 200 ms over the target's whole process tree (every worker and thread): CPU as utime+stime " +
			"deltas over the cell, per request the client sent (warm-up included, as the CPU is); RSS summed over the tree. " +
			fmt.Sprintf("Client CPU, while k6's load ran (from 10%% to 90%% of its CPU time: start-up, setup() and the summary left out): what k6 used of the CPU it could have had (its own use plus what stayed idle on its CPUs, which it shares with the target and the upstream unless pinned), "+
				"then its share of all the CPU used there (the two percentages of the client CPU column). At ≥ %.0f%% and ≥ %.0f%% (nothing left idle, and k6 the main user) the cell is flagged client-bound: a cheaper client would have left the target more CPU, so its req/s is the client's ceiling, not the target's.",
				runner.ClientBoundUtil*100, runner.ClientBoundShare*100),
		Head:  []string{"scenario", "target", "CPU µs/request", "target CPU s", "peak RSS MiB", "mean RSS MiB", "client CPU", "client-bound"},
		Empty: "No resource samples in this bench (rebuilt from the result files alone, or sampling was off).",
	}
	for _, c := range b.cellsOf(isThroughput) {
		if c.Resources == nil || !c.Valid {
			continue
		}
		r := c.Resources
		client, bound := "—", "—"
		if r.ClientCPUs > 0 {
			client = fmt.Sprintf("%.0f%% / %.0f%% (%d CPUs)", r.ClientCPUUtil*100, r.ClientCPUShare*100, r.ClientCPUs)
			bound = "no"
			if r.ClientBound {
				bound = "CLIENT-BOUND"
			}
		}
		class := ""
		if r.ClientBound {
			class = classBound
		}
		t.Rows = append(t.Rows, row{Class: class, Cells: []string{
			c.Scenario, c.Target, fmt.Sprintf("%.1f", r.TargetCPUPerReqMicros), fmt.Sprintf("%.2f", r.TargetCPUSeconds),
			fmt.Sprintf("%.1f", r.RSSPeakMB), fmt.Sprintf("%.1f", r.RSSMeanMB), client, bound,
		}})
	}
	if len(t.Rows) > 0 {
		t.Notes = append(t.Notes, "direct's row is the upstream serving the client itself; a proxy's row is the proxy alone (the upstream behind it is not counted).")
	}
	return t
}

// ClientHeavy is the ratio of the client's CPU to the target's from which a fresh cell is
// flagged client-heavy: its handshakes cost k6 that much more than the target, so its rate
// says more about the client than about the target.
const ClientHeavy = 2.0

// clientTable is the calibration run at the start of the bench: what k6 costs per request
// against a native client on the same load.
func clientTable(b *Bench) table {
	t := table{
		ID: "client", Title: "The client's ceiling",
		Intro: "At the start of the bench, k6 (our reused scenarios on the client the bench ran them with, every response checked: k6-native is our Go load loop, k6-http the k6/http scripts) and native load generators (wrk, h2load: status only) ran the same short load against direct, one after the other. " +
			"Client CPU is over each client's whole life (k6: start-up and warm-up included) per request it sent. " +
			"\"vs peer\" is k6's requests per client CPU-second over the most frugal peer's: below 1, k6 spends more of the shared CPUs on each request than a native client, which leaves the target less, so every req/s here is partly the client's ceiling and \"vs direct\" understates what a proxy costs. The target's own CPU per request (Resources) does not depend on the client.",
		Head:  []string{"protocol", "target", "client", "req/s", "client CPU µs/request", "requests per client CPU-s", "target CPU µs/request", "vs peer"},
		Empty: "No calibration in this bench (CALIBRATE_SECONDS=0, or wrk and h2load are not installed: runner/install-peers.sh).",
	}
	for _, c := range b.Calibration {
		vs := "—"
		if c.VsPeer > 0 {
			vs = fmt.Sprintf("%.2f", c.VsPeer)
		}
		if c.Err != "" {
			t.Rows = append(t.Rows, row{Class: classInvalid, Cells: []string{protoName(c.Proto), c.Target, c.Client, "—", "—", "—", "—", c.Err}})
			continue
		}
		t.Rows = append(t.Rows, row{Cells: []string{protoName(c.Proto), c.Target, c.Client, fmtInt(c.RPS),
			fmt.Sprintf("%.1f", c.ClientCPUMicros), fmtInt(c.ReqPerCPUSecond), fmt.Sprintf("%.1f", c.TargetCPUMicros), vs}})
	}
	if len(t.Rows) > 0 {
		t.Notes = append(t.Notes, "HTTP/3 has no native peer that installs here (Debian 12's h2load is built without it).")
	}
	return t
}

// leadLines are what the client cannot distort, first in the headline and in the text
// summary: the targets' own CPU per request, and their latency at one offered load.
func leadLines(b *Bench) []string {
	return append(costLines(b), equalLoadLines(b)...)
}

// costLines are the headline's first lines: per reused protocol, the targets by their own CPU
// per request (valid cells with resources), cheapest first.
func costLines(b *Bench) []string {
	var out []string
	for _, p := range protoOrder {
		cells := b.cellsOf(func(c *Cell) bool {
			return c.Mode == "reused" && c.Proto == p && c.Valid && c.Resources != nil && c.Resources.TargetCPUPerReqMicros > 0
		})
		if len(cells) == 0 {
			continue
		}
		sort.SliceStable(cells, func(i, j int) bool {
			return cells[i].Resources.TargetCPUPerReqMicros < cells[j].Resources.TargetCPUPerReqMicros
		})
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = fmt.Sprintf("%s %.0f µs", c.Target, c.Resources.TargetCPUPerReqMicros)
		}
		out = append(out, fmt.Sprintf("Target CPU per request, reused %s: %s", protoName(p), strings.Join(parts, "; ")))
	}
	return out
}

// equalLoadLines: per protocol of the equal-load pass, every target's p99 at the same offered
// rate (median over its valid runs), lowest first; a target that could not sustain it is said.
func equalLoadLines(b *Bench) []string {
	var out []string
	for _, p := range protoOrder {
		p99 := map[string][]float64{}
		rate := 0.0
		var overload []string
		for _, e := range b.EqualLoad {
			if e.Proto != p || !e.Valid {
				continue
			}
			rate = e.RateRPS
			if e.Overload != "" {
				if !slices.Contains(overload, e.Target) {
					overload = append(overload, e.Target)
				}
				continue
			}
			p99[e.Target] = append(p99[e.Target], e.P99)
		}
		if len(p99) == 0 && len(overload) == 0 {
			continue
		}
		targets := sortedKeys(p99)
		med := map[string]float64{}
		for _, t := range targets {
			med[t] = runner.Summarize(p99[t]).Median
		}
		sort.SliceStable(targets, func(i, j int) bool { return med[targets[i]] < med[targets[j]] })
		var parts []string
		for _, t := range targets {
			parts = append(parts, t+" "+ms(med[t])+" ms")
		}
		for _, t := range overload {
			parts = append(parts, t+" could not sustain it")
		}
		out = append(out, fmt.Sprintf("p99 at equal load, %s at %s req/s: %s", protoName(p), fmtInt(rate), strings.Join(parts, "; ")))
	}
	return out
}

// clientLine is the headline's word on the client: what drove the reused cells, and its share
// of a native client's requests per CPU-second, per protocol.
func clientLine(b *Bench) string {
	var parts []string
	for _, c := range b.Calibration {
		if c.IsK6() && c.VsPeer > 0 {
			parts = append(parts, fmt.Sprintf("%.2f %s", c.VsPeer, protoName(c.Proto)))
		}
	}
	ran := clientsOf(b, "reused")
	if len(parts) == 0 && ran == "" {
		return ""
	}
	line := "Client: "
	if ran != "" {
		line += "reused cells ran on " + ran
		if len(parts) > 0 {
			line += "; "
		}
	}
	if len(parts) > 0 {
		line += "it makes " + strings.Join(parts, ", ") + " of the requests per CPU-second a native client (wrk/h2load) makes on direct; " +
			"it shares the CPUs with the targets, so below 1 req/s are partly its ceiling and \"vs direct\" understates a proxy's cost (see \"The client's ceiling\")"
	}
	return line
}

// clientsOf says which client drove the cells of mode, per protocol: "native (h1c, h1, h2),
// k6/x/proxybench/http3 (h3)".
func clientsOf(b *Bench, mode string) string {
	var order []string
	protos := map[string][]string{}
	for _, p := range protoOrder {
		for _, c := range b.cellsOf(func(c *Cell) bool { return c.Mode == mode && c.Proto == p && c.Client != "" }) {
			if !slices.Contains(protos[c.Client], p) {
				if len(protos[c.Client]) == 0 {
					order = append(order, c.Client)
				}
				protos[c.Client] = append(protos[c.Client], p)
			}
		}
	}
	var parts []string
	for _, cl := range order {
		parts = append(parts, fmt.Sprintf("%s (%s)", clientName(cl), strings.Join(protos[cl], ", ")))
	}
	return strings.Join(parts, ", ")
}

// clientName says what a result's client is.
func clientName(client string) string {
	if client == "native" {
		return "our native loop (k6/x/proxybench/load)"
	}
	return client
}

func equalLoadTable(b *Bench) table {
	t := table{
		ID: "equal-load", Title: "Equal-load latency",
		Intro: "Open model: every target gets the same constant arrival rate (HTTP/2 and HTTP/3 multiplexed over the reused cells' connections), so latencies compare at the same offered load. " +
			"A target with dropped iterations could not keep up: its row says so, and its latencies are those of a target behind its load.",
		Head:  []string{"protocol", "target", "run", "rate req/s", "requests", "p50 ms", "p99 ms", "p99.9 ms", "dropped", "valid"},
		Empty: "No equal-load pass in this bench.",
	}
	cells := append([]EqualLoadCell{}, b.EqualLoad...)
	rank := map[string]int{}
	for i, tg := range b.Targets() {
		rank[tg] = i
	}
	sort.SliceStable(cells, func(i, j int) bool {
		if x, y := protoRank(cells[i].Proto), protoRank(cells[j].Proto); x != y {
			return x < y
		}
		if x, y := rank[cells[i].Target], rank[cells[j].Target]; x != y {
			return x < y
		}
		return cells[i].Run < cells[j].Run
	})
	for _, e := range cells {
		v, class := "yes", ""
		switch {
		case !e.Valid:
			v, class = "NO", classInvalid
		case e.Overload != "":
			v, class = "yes: could not sustain "+fmtInt(e.RateRPS)+" req/s", classBound
		}
		run := "1"
		if e.Run > 1 {
			run = strconv.Itoa(e.Run)
		}
		p999 := "—"
		if e.P999 > 0 {
			p999 = ms(e.P999)
		}
		t.Rows = append(t.Rows, row{Class: class, Cells: []string{
			protoName(e.Proto), e.Target, run, fmtInt(e.RateRPS), fmtInt(e.Requests), ms(e.P50), ms(e.P99), p999, fmtInt(e.Dropped), v,
		}})
	}
	return t
}

// spreadTable gives every statistic of each throughput cell's req/s over its valid runs, for
// the cells that ran more than once.
func spreadTable(b *Bench) table {
	t := table{
		ID: "spread", Title: "Run-to-run spread",
		Intro: "req/s of each throughput cell over its valid runs (invalid runs left out, see the tables above): " +
			"stdev is the sample standard deviation (n − 1), CV = stdev / mean.",
		Head:  []string{"scenario", "target", "n", "median", "mean", "stdev", "CV %", "min", "max"},
		Empty: "Every cell ran once (RUNS=1): no spread to show. RUNS=3 or more measures it.",
	}
	for _, c := range b.cellsOf(isThroughput) {
		s := c.RPS
		if s.N < 2 {
			continue
		}
		t.Rows = append(t.Rows, row{Cells: []string{
			c.Scenario, c.Target, strconv.Itoa(s.N), fmtInt(s.Median), fmtInt(s.Mean), fmtInt(s.Stdev),
			fmt.Sprintf("%.1f", s.CVPct), fmtInt(s.Min), fmtInt(s.Max),
		}})
	}
	return t
}

// runsTable lists every run, valid or not, with its file (and k6 web dashboard, when kept).
func runsTable(b *Bench) table {
	t := table{
		ID: "runs", Title: "Every run",
		Intro: "Each k6 run behind the tables, invalid ones included; the files are beside this report.",
		Head:  []string{"scenario", "protocol", "target", "run", "req/s", "p50 ms", "p99 ms", "valid", "result", "k6 dashboard"},
		Links: []int{8, 9},
	}
	for _, c := range b.Cells {
		for i, r := range c.Runs {
			v, class := "yes", ""
			if !r.Valid {
				v, class = "NO", classInvalid
			}
			rps := "—"
			if r.RPS != nil {
				rps = fmtInt(*r.RPS)
			}
			dash := "—"
			if r.Dashboard != "" {
				dash = r.Dashboard
			}
			t.Rows = append(t.Rows, row{Class: class, Cells: []string{
				c.Scenario, c.Proto, c.Target, strconv.Itoa(i + 1), rps, ms(r.P50), ms(r.P99), v, r.File, dash,
			}})
		}
	}
	return t
}

// invalidList says why each invalid cell or run is left out, and which cells were not run.
func invalidList(b *Bench) (invalid, notRun []string) {
	for _, c := range b.Cells {
		name := fmt.Sprintf("%s %s %s", c.Scenario, c.Proto, c.Target)
		if c.NoProto != "" {
			notRun = append(notRun, fmt.Sprintf("%s: %s (%s)", name, c.NoProto, c.NoProtoReason))
			continue
		}
		for i, r := range c.Runs {
			if r.Valid {
				continue
			}
			what := "the cell"
			if len(c.Runs) > 1 {
				what = fmt.Sprintf("run %d of %d", i+1, len(c.Runs))
			}
			fig := ""
			if r.RPS != nil {
				fig = fmt.Sprintf(" (it measured %s req/s, p99 %s ms: not counted)", fmtInt(*r.RPS), ms(r.P99))
			}
			invalid = append(invalid, fmt.Sprintf("%s, %s: %s%s", name, what, strings.Join(r.Invalid, "; "), fig))
		}
		if len(c.Runs) == 0 {
			invalid = append(invalid, name+": no run")
		}
	}
	for _, e := range b.EqualLoad {
		if !e.Valid {
			invalid = append(invalid, fmt.Sprintf("equal-load %s %s: %s", e.Proto, e.Target, strings.Join(e.Invalid, "; ")))
		}
	}
	// a result file the rebuild could not read: its run is in no table, so it is said here
	for _, u := range b.Unreadable {
		invalid = append(invalid, fmt.Sprintf("unreadable result file, left out: %s", u.Error))
	}
	return invalid, notRun
}

// headline is the short summary at the top: per throughput scenario, the valid targets by
// median req/s.
func headline(b *Bench) []string {
	// first what the client cannot distort, then req/s, which is partly the client's ceiling
	out := leadLines(b)
	var scenarios []string
	for _, c := range b.Cells {
		if isThroughput(&c) && !slices.Contains(scenarios, c.Scenario) {
			scenarios = append(scenarios, c.Scenario)
		}
	}
	for _, sc := range scenarios {
		cells := b.cellsOf(func(c *Cell) bool { return c.Scenario == sc && c.Valid && c.RPS.N > 0 })
		if len(cells) == 0 {
			continue
		}
		sort.SliceStable(cells, func(i, j int) bool { return cells[i].RPS.Median > cells[j].RPS.Median })
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = fmt.Sprintf("%s %s", c.Target, approx(c.RPS.Median))
			if c.Resources != nil && c.Resources.ClientBound {
				parts[i] += " (client-bound: the client's ceiling)"
			}
		}
		mode := "Reused"
		if cells[0].Mode == "fresh" {
			mode = "Fresh"
		}
		line := fmt.Sprintf("%s %s: %s req/s", mode, protoName(cells[0].Proto), strings.Join(parts, "; "))
		// Said, not dropped: the targets without a figure and why.
		var invalid []string
		noProto := map[string][]string{}
		for _, c := range b.cellsOf(func(c *Cell) bool { return c.Scenario == sc }) {
			switch {
			case c.NoProto != "":
				noProto[c.NoProto] = append(noProto[c.NoProto], c.Target)
			case !c.Valid || c.RPS.N == 0:
				invalid = append(invalid, c.Target)
			}
		}
		var why []string
		if len(invalid) > 0 {
			why = append(why, "invalid: "+strings.Join(invalid, ", "))
		}
		for _, k := range sortedKeys(noProto) {
			why = append(why, k+": "+strings.Join(noProto[k], ", "))
		}
		if len(why) > 0 {
			line += " (" + strings.Join(why, "; ") + ")"
		}
		out = append(out, line)
	}
	if l := clientLine(b); l != "" {
		out = append(out, l)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// approx is a rate as a reader skims it: ~72k, ~4.5k, ~950.
func approx(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("~%.0fk", v/1000)
	case v >= 1000:
		return fmt.Sprintf("~%.1fk", v/1000)
	}
	return fmt.Sprintf("~%.0f", v)
}

// fmtInt rounds to a whole number with thousands separators: 71,969.
func fmtInt(v float64) string {
	n := int64(math.Round(v))
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	var sb strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(ch)
	}
	if neg {
		return "-" + sb.String()
	}
	return sb.String()
}

// ms formats milliseconds as the console tables do.
func ms(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
