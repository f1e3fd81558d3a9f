package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/stack"
)

// MODES=idle,connections: each target idles once per protocol in the matrix, each time on a
// process restarted for it (RESTART off); then the reused cells run at each level, interleaved
// across the targets, each kept under connections/c<N>/ as a point of the sweep, not a cell;
// the progress counts them all.
func TestBenchRunsTheSweeps(t *testing.T) {
	b, ft, fr, stderr := newTestBench(t)
	b.Run(context.Background(), Plan{
		Targets: []string{stack.Direct, "nginx", "caddy", "godoxy"}, Protos: []string{"h1c", "h2"},
		Modes: []string{"idle", "connections"}, Runs: 1, ConnectionLevels: []int{4, 16},
	})
	var want []string
	for range []string{"h1c", "h2"} {
		for _, t := range []string{stack.Direct, "nginx", "caddy"} {
			want = append(want, "idle/"+t+"/1")
		}
	}
	for range []int{4, 16} {
		for _, sc := range []string{"reused-h1c", "reused-h2"} {
			for _, t := range []string{stack.Direct, "nginx", "caddy"} {
				want = append(want, sc+"/"+t+"/1")
			}
		}
	}
	if got := strings.Join(fr.ran, " "); got != strings.Join(want, " ") {
		t.Errorf("ran %s\nwant %s", got, strings.Join(want, " "))
	}
	if got, want := strings.Join(ft.restarts, " "), strings.Repeat("direct nginx caddy ", 2); got+" " != want {
		t.Errorf("restarted %q, want each target before each of its idle runs: %q", got, want)
	}
	var points []string
	for _, p := range b.Report.Connections {
		points = append(points, fmt.Sprintf("%s/%s/%d %s", p.Proto, p.Target, p.Connections, p.File))
	}
	if len(points) != 12 || points[0] != "h1c/direct/4 connections/c4/reused-h1c-direct.json" || points[11] != "h2/caddy/16 connections/c16/reused-h2-caddy.json" {
		t.Errorf("sweep points %q", points)
	}
	for _, c := range b.Report.Cells {
		if c.Mode != "idle" && c.NoProto == "" {
			t.Errorf("cell %s %s %s: the sweep's runs are no cells of the bench", c.Scenario, c.Target, c.Proto)
		}
	}
	run := 0
	for _, r := range b.Results {
		if r.Skipped == "" {
			run++
		}
	}
	if run != len(fr.ran) {
		t.Errorf("%d results run for %d runs: every sweep point counts in the bench's validity", run, len(fr.ran))
	}
	if n := len(fr.ran); !strings.Contains(stderr.String(), fmt.Sprintf("[%d/%d]", n, n)) {
		t.Errorf("the progress does not count the %d runs:\n%s", n, stderr.String())
	}
}

// Every run of a sweep is a point beside k6's for the curves dashboard, with the figures the
// report keeps of it: an idle run's KiB per connection, a connections level's req/s, a body
// size's MB/s; the matrix's own cells are none.
func TestSweepsArePoints(t *testing.T) {
	b, _, _, _ := newTestBench(t)
	fp := &fakePoints{}
	b.Points = fp
	b.Run(context.Background(), Plan{
		Targets: []string{stack.Direct, "nginx"}, Protos: []string{"h1c"},
		Modes: []string{"reused", "idle", "connections", "bodies"}, Runs: 1, ConnectionLevels: []int{4, 16},
		BodySizes: []int{1024, 1 << 20},
	})
	got := map[string]observe.SweepPoint{}
	for _, p := range fp.sweeps {
		got[p.Sweep+" "+p.Target+" "+p.Point()] = p
	}
	// 2 idle, 2 targets × 2 levels, 2 targets × 2 sizes × 2 directions
	if len(fp.sweeps) != 2+4+8 || len(got) != len(fp.sweeps) {
		t.Fatalf("%d sweep points, %d apart, want 14: %+v", len(fp.sweeps), len(got), fp.sweeps)
	}
	for _, c := range b.Report.Connections {
		p, ok := got[fmt.Sprintf("connections %s %s %d", c.Target, c.Proto, c.Connections)]
		if !ok || p.RPS != c.RPS || p.P99MS != c.P99 || p.Valid != c.Valid || p.TestID != "t1" {
			t.Errorf("connections point %+v, want the report's %+v", p, c)
		}
	}
	for _, target := range []string{stack.Direct, "nginx"} {
		p := got["idle "+target+" h1c 100"]
		if p.KiBPerConnection == nil || *p.KiBPerConnection <= 0 {
			t.Errorf("idle point of %s: %+v, want its KiB per connection", target, p)
		}
		for _, dir := range []string{"download", "upload"} {
			p := got["bodies "+target+" h1c 1048576 "+dir]
			if p.MBPerS == nil || math.Abs(*p.MBPerS-p.RPS*1.048576) > 1e-9 {
				t.Errorf("%s %s 1 MiB point %+v, want its MB/s", dir, target, p)
			}
		}
	}
}
