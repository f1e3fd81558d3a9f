package report

import (
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/verdict"
)

// idleRun is an idle run's result: held of 1000 connections planned, the target's RSS grown
// from 10 MiB by kib per connection held, its trickle's p99.
func idleRun(target, proto string, held, kib, p99 float64, invalid ...string) *result.Result {
	r := &result.Result{
		Scenario: "idle", Mode: "idle", Target: target, Proto: proto, Requests: 200, Valid: len(invalid) == 0, Invalid: invalid,
		Latency: result.Stats{P99: p99}, Idle: &result.Idle{Connections: 1000, Openers: 16, TrickleConnections: 4, TrickleRate: 40},
		Counts: &verdict.Counts{ConnectionsHeld: &held},
	}
	r.IdleCost = result.NewIdleCost(10, 10+held*kib/1024, held, 0.2, 10, 50)
	return r
}

// The idle table and headline say, per protocol, every target's memory per idle connection
// (least first in the headline; only valid runs there), and why a capping target is invalid.
func TestIdleReport(t *testing.T) {
	t.Parallel()
	b := New("idle", "smoke", nil)
	b.Add("idle-h1c-nginx.json", idleRun("nginx", "h1c", 1000, 2.5, 1.5), nil)
	b.Add("idle-h1c-direct.json", idleRun("direct", "h1c", 1000, 4, 0.5), nil)
	b.Add("idle-h2-direct.json", idleRun("direct", "h2", 1000, 8, 0.7), nil)
	b.Add("idle-h1c-haproxy.json", idleRun("haproxy", "h1c", 900, 3, 1, "the target held 900 of the 1000 connections planned at the end: it caps connections below the plan"), nil)
	b.Finish()

	lines := idleLines(b)
	want := []string{
		"Memory per idle connection, HTTP/1.1 cleartext (1,000 connections held): nginx 2.5; direct 4.0 KiB",
		"Memory per idle connection, HTTP/2 TLS (1,000 connections held): direct 8.0 KiB",
	}
	if strings.Join(texts(lines), "\n") != strings.Join(want, "\n") {
		t.Errorf("headline:\n%s\nwant:\n%s", strings.Join(texts(lines), "\n"), strings.Join(want, "\n"))
	}
	checkRows(t, idleTable(b), func(r row) string { return r.Class + ": " + strings.Join(r.Cells, " | ") },
		"baseline: HTTP/1.1 cleartext | direct | 1,000 | 1,000 | 4.0 | 10.0 → 13.9 | 0.020 | 0.50 | valid",
		": HTTP/1.1 cleartext | nginx | 1,000 | 1,000 | 2.5 | 10.0 → 12.4 | 0.020 | 1.50 | valid",
		"invalid: HTTP/1.1 cleartext | haproxy | 1,000 | 900 | 3.0 | 10.0 → 12.6 | 0.020 | 1.00 | invalid: the target held 900 of the 1000 connections planned at the end: it caps connections below the plan",
		"baseline: HTTP/2 TLS | direct | 1,000 | 1,000 | 8.0 | 10.0 → 17.8 | 0.020 | 0.70 | valid",
	)
	if e := idleTable(New("none", "smoke", nil)); len(e.Rows) != 0 || e.Empty == "" {
		t.Errorf("a bench without idle runs: %+v", e)
	}
}
