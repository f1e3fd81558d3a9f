package report

import (
	"fmt"
	"slices"
	"sort"

	"github.com/proxybench/proxybench/runner"
)

// extraMedian is the median over the valid runs of an extra trend's p50, "—" without one.
func extraMedian(c *Cell, key string) string {
	return extraQuantile(c, key, false)
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
		if busy(c) {
			return ms(v) + "*", ""
		}
		return ms(v), ""
	}
	return "invalid", classInvalid
}

// busy tells whether a run of the cell saw outside load.
func busy(c *Cell) bool {
	return slices.ContainsFunc(c.Runs, func(r Run) bool { return r.OutsideLoad.Busy() })
}

// busyNote explains the * of a figure measured under outside load.
func busyNote() string {
	return fmt.Sprintf("* measured while processes other than the client, the target and the upstream used more than %.0f%% of the CPU: "+
		"the figure is the machine's as much as the target's.", runner.OutsideLoadShare*100)
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
	anyBusy := false
	for _, tg := range b.Targets() {
		r := row{Cells: []string{tg}}
		found := false
		for _, col := range cols {
			c := b.find(col.scenario, tg, col.proto)
			v, class := probeValue(c)
			found = found || c != nil
			anyBusy = anyBusy || (c != nil && class == "" && busy(c))
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
	if anyBusy {
		t.Notes = append(t.Notes, busyNote())
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

// gapKeys are the extra trends of the gaps between a paced probe's parts.
var gapKeys = map[string]string{"stream": "stream_chunk_gap", "sse": "sse_event_gap"}

// pacingTable is the streamed probes' longest gap between parts, per target and protocol:
// a stall is a figure, never a verdict (a busy machine makes one as a proxy can), and a gap
// measured while other processes took the CPU is marked so.
func pacingTable(b *Bench) table {
	t := table{
		ID: "pacing", Title: "Streamed responses: the longest gap",
		Intro: "The longest gap between two parts of a response (/stream's 4 KiB chunks, sent 50 ms apart; /sse's events, 150 ms apart), " +
			"over every sample of every run, ms. A proxy that holds parts back and releases them together is invalid (its cell says why); " +
			"a stall, one late part and then the beat again, is only shown here: a busy machine makes one as a proxy can.",
		Empty: "No streamed probe in this bench.",
	}
	cols := b.wideCols("stream", "sse")
	if len(cols) == 0 {
		return t
	}
	t.Head = []string{"target"}
	for _, c := range cols {
		t.Head = append(t.Head, "/"+c.scenario+" "+c.proto)
	}
	anyBusy, stalled := false, false
	var sporadic []string
	for _, tg := range b.Targets() {
		r := row{Cells: []string{tg}}
		found := false
		for _, col := range cols {
			c := b.find(col.scenario, tg, col.proto)
			if c != nil {
				for _, run := range c.Runs {
					if s := run.Pacing.Sporadic(); s != "" {
						sporadic = append(sporadic, fmt.Sprintf("/%s %s %s: %s", col.scenario, col.proto, tg, s))
					}
				}
			}
			v, class, st, bz := gapValue(c)
			found = found || c != nil
			stalled, anyBusy = stalled || st, anyBusy || bz
			if class == classInvalid {
				r.Class = classInvalid
			}
			r.Cells = append(r.Cells, v)
		}
		if found {
			t.Rows = append(t.Rows, r)
		}
	}
	if stalled {
		t.Notes = append(t.Notes, "stalls: responses with a gap longer than the interval and its slack (/stream 75 ms, /sse 187.5 ms): figures, not verdicts.")
	}
	t.Notes = append(t.Notes, sporadic...)
	if anyBusy {
		t.Notes = append(t.Notes, busyNote())
	}
	return t
}

// gapValue is a streamed probe cell's longest gap over its runs, with its stalls and a * when
// a run saw outside load; it also says whether any run stalled or was busy.
func gapValue(c *Cell) (v, class string, stalled, busyRun bool) {
	if c == nil {
		return "—", "", false, false
	}
	if c.NoProto != "" {
		return c.NoProto, classNoProto, false, false
	}
	longest, stalls, timed := 0.0, 0.0, false
	for _, r := range c.Runs {
		if s, ok := r.Extra[gapKeys[c.Scenario]]; ok {
			longest, timed = max(longest, s.Max), true
		}
		if r.Pacing != nil {
			stalls += r.Pacing.Stalls
		}
	}
	busyRun = busy(c)
	if !c.Valid {
		class = classInvalid
	}
	if !timed {
		if !c.Valid {
			return "invalid", class, false, busyRun
		}
		return "—", class, false, busyRun
	}
	v = ms(longest)
	if stalls > 0 {
		v += fmt.Sprintf(" (%.0f stalled)", stalls)
	}
	if busyRun {
		v += "*"
	}
	return v, class, stalls > 0, busyRun
}
