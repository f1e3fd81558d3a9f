package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/stack"
)

// TestConnectionSweeps: the idle and connections modes on the real CLI against real targets.
// direct and an nginx copy hold every one of 200 idle connections over h1c and h2, valid,
// with what holding them cost (RSS per connection, CPU) and the trickle's p99; an nginx copy
// allowed 64 connections per worker holds fewer and is invalid, saying so, within the run's
// bounds (no hang). The reused cells run at 4 and 16 connections, each a point of the curves.
func TestConnectionSweeps(t *testing.T) {
	const plain, capped = "nginx-copy", "nginx-capped"
	h := variantHarness(t, 2950,
		nginxVariant{name: plain},
		nginxVariant{capped, [][2]string{{"worker_connections {{.OpenFiles}};", "worker_connections 64;"}}},
	)
	testid := "e2e-sweeps"
	out, err := h.proxybenchEnv(t, []string{"IDLE_CONNECTIONS=200", "CONNECTION_LEVELS=4,16"}, "bench",
		"-targets", plain+","+capped, "-modes", "idle,connections", "-protos", "h1c,h2", "-calibrate-seconds", "0", "-testid", testid)
	// the capped copy's idle runs are invalid: the bench says so in its exit status
	if err == nil || !strings.Contains(out, "cells invalid") {
		t.Errorf("bench with a capped target: err %v, want the invalid cells said\n%s", err, out)
	}
	b, lerr := report.Load(filepath.Join(h.results, testid))
	if lerr != nil {
		t.Fatalf("%v\n%s", lerr, out)
	}
	if !strings.Contains(out, "Memory per idle connection, HTTP/1.1 cleartext") || !strings.Contains(out, "== Idle connections") {
		t.Errorf("the bench's text has no idle table or headline:\n%s", out)
	}
	idle := map[string]report.Cell{}
	for _, c := range b.Cells {
		if c.Mode == "idle" {
			idle[c.Target+" "+c.Proto] = c
		}
	}
	for _, target := range []string{stack.Direct, plain, capped} {
		for _, proto := range []string{"h1c", "h2"} {
			c, ok := idle[target+" "+proto]
			if !ok || len(c.Runs) != 1 {
				t.Errorf("%s %s: no idle run in %+v", target, proto, idle)
				continue
			}
			r := c.Runs[0]
			cost := r.IdleCost
			t.Logf("%s %s: valid %v %v, cost %+v, trickle p99 %.2f ms", target, proto, r.Valid, r.Invalid, cost, r.P99)
			if cost == nil || cost.Samples < 2 || cost.RSSBeforeMB <= 0 || cost.RSSHeldMB <= 0 || cost.HoldSeconds <= 0 {
				t.Errorf("%s %s: idle cost %+v, want RSS before and over the hold", target, proto, cost)
				continue
			}
			if target == capped {
				if r.Valid || !slices.ContainsFunc(r.Invalid, func(s string) bool { return strings.Contains(s, "caps connections below the plan") }) {
					t.Errorf("%s %s: valid %v, %v; want invalid: it caps connections below the plan", target, proto, r.Valid, r.Invalid)
				}
				if cost.ConnectionsHeld >= 200 {
					t.Errorf("%s %s: held %v of 200 with 64 connections per worker", target, proto, cost.ConnectionsHeld)
				}
				continue
			}
			if !r.Valid || cost.ConnectionsHeld != 200 || r.IdlePlanned != 200 || r.P99 <= 0 || r.Requests <= 0 {
				t.Errorf("%s %s: valid %v %v, held %v of %v, trickle p99 %v over %v requests; want all 200 held, valid", target, proto, r.Valid, r.Invalid, cost.ConnectionsHeld, r.IdlePlanned, r.P99, r.Requests)
			}
		}
	}

	got := map[string][]int{}
	for _, p := range b.Connections {
		got[p.Target+" "+p.Proto] = append(got[p.Target+" "+p.Proto], p.Connections)
		if p.Target != capped && (!p.Valid || p.RPS <= 0 || p.P99 <= 0 || p.RSSPeakMB <= 0 || p.File == "") {
			t.Errorf("connections sweep point %+v: want valid, with req/s, p99, RSS and its file", p)
		}
	}
	for _, target := range []string{stack.Direct, plain} {
		for _, proto := range []string{"h1c", "h2"} {
			if k := target + " " + proto; !slices.Equal(got[k], []int{4, 16}) {
				t.Errorf("%s: connections swept %v, want [4 16]", k, got[k])
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(h.results, testid, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	for _, id := range []string{`id="idle"`, `id="connections"`, `id="curve-connections-rps-h1c"`, `id="curve-connections-rss-h2"`} {
		if !strings.Contains(html, id) {
			t.Errorf("report.html has no %s", id)
		}
	}
}
