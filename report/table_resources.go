package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/proxybench/proxybench/verdict"
)

func resourcesTable(b *Bench) table {
	t := table{
		ID: "resources", Title: "Resources",
		Intro: "Sampled from /proc every 200 ms over the target's whole process tree (every worker and thread): CPU as utime+stime " +
			"deltas over the cell, per request the client sent (warm-up included, as the CPU is); RSS summed over the tree. " +
			fmt.Sprintf("Client CPU, while k6's load ran (from 10%% to 90%% of its CPU time: start-up, setup() and the summary left out): what k6 used of the CPU it could have had (its own use plus what stayed idle on its CPUs, which it shares with the target and the upstream unless pinned), "+
				"then its share of all the CPU used there (the two percentages of the client CPU column). At ≥ %.0f%% and ≥ %.0f%% (nothing left idle, and k6 the main user) the cell is flagged client-bound: a cheaper client would have left the target more CPU, so its req/s is the client's ceiling, not the target's.",
				verdict.ClientBoundUtil*100, verdict.ClientBoundShare*100),
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

// clientTable is the calibration run at the start of the bench: what k6 costs per request
// against a native client on the same load.
func clientTable(b *Bench) table {
	t := table{
		ID: "client", Title: "The client's ceiling",
		Intro: "At the start of the bench, k6 (our reused scenarios on the client the bench ran them with, every response checked: k6-native is our Go load loop, k6-http the k6/http scripts) and native load generators (wrk, h2load: status only) ran the same short load against direct, one after the other. " +
			"Client CPU is over each client's whole life (k6: start-up and warm-up included) per request it sent. " +
			"\"vs peer\" is k6's requests per client CPU-second over the most frugal peer's: below 1, k6 spends more of the shared CPUs on each request than a native client, which leaves the target less, so every req/s here is partly the client's ceiling and \"vs direct\" understates what a proxy costs. The target's own CPU per request (Resources) does not depend on the client.",
		Head:  []string{"protocol", "target", "client", "req/s", "client CPU µs/request", "requests per client CPU-s", "target CPU µs/request", "vs peer"},
		Empty: "No calibration in this bench (CALIBRATE_SECONDS=0, or wrk and h2load are not installed: internal/calibrate/install-peers.sh).",
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
		t.Rows = append(t.Rows, row{Cells: []string{
			protoName(c.Proto), c.Target, c.Client, fmtInt(c.RPS),
			fmt.Sprintf("%.1f", c.ClientCPUMicros), fmtInt(c.ReqPerCPUSecond), fmt.Sprintf("%.1f", c.TargetCPUMicros), vs,
		}})
	}
	if len(t.Rows) > 0 {
		t.Notes = append(t.Notes, "HTTP/3 has no native peer that installs here (Debian 12's h2load is built without it).")
	}
	return t
}

// costLines are the headline's first lines: per reused protocol, the targets by their own CPU
// per request (valid cells with resources), cheapest first.
func costLines(b *Bench) []headLine {
	return append(costLinesOf(b, "reused"), costLinesOf(b, "fresh")...)
}

// costLinesOf are costLines for the cells of one mode: per request (reused) or per new
// connection (fresh), where the fresh line adds the p50 from a new connection to the first byte.
func costLinesOf(b *Bench, mode string) []headLine {
	var out []headLine
	for _, p := range protoOrder {
		cells := b.cellsOf(func(c *Cell) bool {
			return c.Mode == mode && c.Proto == p && c.Valid && c.Resources != nil && c.Resources.TargetCPUPerReqMicros > 0
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
			if ttfb := extraQuantile(c, "conn_ttfb", false); mode == "fresh" && ttfb != "—" {
				parts[i] += " (first byte " + ttfb + " ms)"
			}
		}
		topic := "Target CPU per request, reused " + protoName(p)
		if mode == "fresh" {
			topic = "Target CPU per new connection, fresh " + protoName(p)
		}
		out = append(out, headLine{Topic: topic, Text: topic + ": " + strings.Join(parts, "; ")})
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
