package report

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// shareLine is the sentence every report carries: the numbers are relative to this machine,
// or to these two hosts when the load and the stack ran apart (make bench STACK=…).
func shareLine(b *Bench) string {
	if load, stack, ok := b.Hosts(); ok {
		return fmt.Sprintf("The load on %s, the stack on %s: the client and the targets did not share CPUs; compare targets with each other on these hosts, not with other machines.", load, stack)
	}
	pin := manifestString(b, "pinning")
	switch n := b.CPUs(); {
	case n > 0 && (pin == "" || pin == "none" || strings.HasPrefix(pin, "none:")): // engine/manifest.go says "none: …"
		return fmt.Sprintf("Client, proxies and upstream share %d CPUs (no pinning): compare targets with each other on this machine, not with other machines.", n)
	case n > 0:
		return fmt.Sprintf("Client, proxies and upstream run on %d CPUs, pinned: %s.", n, pin)
	default:
		return "Client, proxies and upstream share this machine's CPUs (their number was not recorded: no manifest); compare targets with each other, not with other machines."
	}
}

// Hosts says which host ran what when the load and the stack ran on two (manifest "hosts",
// engine's RemoteStack.Apart): each host with its CPUs; ok is false for one machine.
func (b *Bench) Hosts() (load, stack string, ok bool) {
	hosts, _ := b.Manifest["hosts"].(map[string]any)
	l, _ := hosts["load"].(map[string]any)
	s, _ := hosts["stack"].(map[string]any)
	if l == nil || s == nil {
		return "", "", false
	}
	say := func(h map[string]any, name string) string {
		return fmt.Sprintf("%v (%v; CPUs: %v)", h[name], h["ran"], h["cpus"])
	}
	return say(l, "name"), say(s, "address"), true
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
	add("Fresh: least window (native loop: past the requests until then)", s["fresh_duration"])
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
	add("Open files (RLIMIT_NOFILE)", manifestString(b, "open_files"))
	add("Idle: connections held", s["idle_connections"])
	add("Connections sweep", manifestString(b, "connections"))
	switch b.Manifest["restart_between_runs"] {
	case true:
		add("Targets", "restarted before each run (RESTART=1)")
	case false:
		add("Targets", "started once for the whole bench")
	}
	if load, stack, ok := b.Hosts(); ok {
		add("Load host", load)
		add("Stack host", stack)
	} else if n := b.CPUs(); n > 0 {
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
	t.Rows = append(t.Rows, bodyRunRows(b)...)
	return t
}

// listItem is one line of the invalid or not-run list; ID, on the first line of a cell, is the
// anchor the first screen links the cell's name to.
type listItem struct {
	ID, Text string
}

// invalidAnchor is the HTML id of an invalid cell's first reason.
func invalidAnchor(scenario, proto, target string) string {
	return "invalid-" + anchorSafe.ReplaceAllString(scenario+"-"+proto+"-"+target, "_")
}

var anchorSafe = regexp.MustCompile(`[^A-Za-z0-9-]+`)

// invalidList says why each invalid cell or run is left out, and which cells were not run.
func invalidList(b *Bench) (invalid, notRun []listItem) {
	for _, c := range b.Cells {
		name := fmt.Sprintf("%s %s %s", c.Scenario, c.Proto, c.Target)
		if c.NoProto != "" {
			notRun = append(notRun, listItem{Text: fmt.Sprintf("%s: %s (%s)", name, c.NoProto, c.NoProtoReason)})
			continue
		}
		id := invalidAnchor(c.Scenario, c.Proto, c.Target)
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
			invalid = append(invalid, listItem{ID: id, Text: fmt.Sprintf("%s, %s: %s%s", name, what, strings.Join(r.Invalid, "; "), fig)})
			id = ""
		}
		if len(c.Runs) == 0 {
			invalid = append(invalid, listItem{ID: id, Text: name + ": no run"})
		}
	}
	seen := map[string]bool{}
	for _, e := range b.EqualLoad {
		if !e.Valid {
			id := invalidAnchor("equal-load", e.Proto, e.Target)
			if seen[id] {
				id = "" // the target's first invalid run holds the anchor
			} else {
				seen[id] = true
			}
			invalid = append(invalid, listItem{ID: id, Text: fmt.Sprintf("equal-load %s %s: %s", e.Proto, e.Target, strings.Join(e.Invalid, "; "))})
		}
	}
	notRunBodies := map[string]bool{}
	for _, c := range b.Bodies {
		switch {
		case c.NoProto != "":
			// one line per target and protocol, not per size
			line := fmt.Sprintf("%s %s %s: %s (%s)", c.Scenario, c.Proto, c.Target, c.NoProto, c.NoProtoReason)
			if !notRunBodies[line] {
				notRunBodies[line] = true
				notRun = append(notRun, listItem{Text: line})
			}
		case !c.Valid:
			fig := ""
			if c.MBPerS != nil {
				fig = fmt.Sprintf(" (it measured %s MB/s: not counted)", rate(*c.MBPerS))
			}
			invalid = append(invalid, listItem{ID: c.anchor(), Text: fmt.Sprintf("%s: %s%s; %s", c.name(), strings.Join(c.Invalid, "; "), fig, c.File)})
		}
	}
	// a result file the rebuild could not read: its run is in no table, so it is said here
	for _, u := range b.Unreadable {
		invalid = append(invalid, listItem{Text: fmt.Sprintf("unreadable result file, left out: %s", u.Error)})
	}
	return invalid, notRun
}
