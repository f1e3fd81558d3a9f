package report

import (
	"fmt"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/verdict"
)

// synthBench is a bench with known inputs: direct, nginx, caddy and envoy; h1 and h2 (and h3,
// which nginx lacks); reused with three runs (one of caddy's invalid), fresh with one; every
// probe; resources with one client-bound cell; an equal-load pass with one dropped cell.
func synthBench() *Bench {
	b := New("synth-1", "smoke", map[string]any{
		"k6_version": "v2.2.0", "kernel": "6.1.0", "cpu_model": "Test CPU", "cpus": float64(2),
		"pinning": "none", "git_commit": "abc123", "restart_between_runs": true,
		"proxies": map[string]any{"nginx": "1.22.1", "caddy": "2.6.2", "envoy": "1.40.0"},
	})
	b.Started = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	b.Settings = map[string]string{"duration": "10s", "warmup": "3s", "connections": "32", "streams": "16", "requests": "2000", "fresh_connections": "32", "samples": "5", "upload_bytes": "262144"}

	rps := func(v float64) *float64 { return &v }
	res := func(cpu, reqs, peak, mean, client float64) *sample.Resources {
		r := &sample.Resources{TargetCPUSeconds: cpu, RSSPeakMB: peak, RSSMeanMB: mean, TargetProcs: 2, Samples: 65}
		r.PerRequest(reqs)
		r.ClientCPUSeconds, r.ClientCPUs = client*26, 2
		r.ClientCPUUtil, r.ClientCPUShare = client, 0.7
		r.ClientBound = client >= verdict.ClientBoundUtil && r.ClientCPUShare >= verdict.ClientBoundShare
		return r
	}
	// reused: req/s per run for each target and protocol.
	reused := map[string]map[string][]float64{
		"direct": {"h1": {10000, 11000, 9000}, "h2": {8000, 8000, 8000}, "h3": {5000, 5200, 4800}},
		"nginx":  {"h1": {8000, 8800, 7200}, "h2": {6000, 6100, 5900}},
		"caddy":  {"h1": {5000, 5500, 4500}, "h2": {4000, 4100, 3900}, "h3": {2500, 2600, 2400}},
		"envoy":  {"h1": {7000, 7100, 6900}, "h2": {6500, 6600, 6400}, "h3": {3000, 3100, 2900}},
	}
	targets := []string{"direct", "nginx", "caddy", "envoy"}
	for _, t := range targets {
		for _, p := range []string{"h1", "h2", "h3"} {
			sc := "reused-" + p
			runs, ok := reused[t][p]
			if !ok {
				b.Add(sc+"-"+t+".json", &result.Result{
					Schema: 1, Scenario: sc, Target: t, Proto: p, Mode: "reused",
					Skipped: "no " + p, SkipReason: t + " does not serve " + p + " (it serves h1, h1c, h2)",
				}, nil)
				continue
			}
			for i, v := range runs {
				r := &result.Result{
					Schema: 1, TestID: "synth-1", Scenario: sc, Target: t, Proto: p, Mode: "reused", Route: "/",
					Profile: "smoke", DurationS: 10, Requests: v * 10, RPS: rps(v),
					Latency: result.Stats{P50: 1000 / v * 3, P95: 1000 / v * 6, P99: 1000 / v * 10}, Valid: true, Invalid: []string{},
				}
				// the upstream's connections: the warm-up's 32 for 100 000 requests, but nginx's
				// h2 pool churns one for about every second request
				r.UpstreamConns = &result.UpstreamConns{Opened: 32, Requests: 100000, Per1k: 0.32}
				if t == "nginx" && p == "h2" {
					r.UpstreamConns = &result.UpstreamConns{Opened: 52800, Requests: 100000, Per1k: 528}
				}
				if t == "caddy" && p == "h1" && i == 2 {
					r.Valid, r.Invalid = false, []string{"12 of 45000 checks failed: status is 200"}
				}
				client := 0.5
				if t == "direct" && p == "h1" {
					client = 0.95
				}
				b.Add(fmt.Sprintf("%s-%s.run%d.json", sc, t, i+1), r, res(v*13*float64(len(t))/1e6*10, v*13, 10+float64(len(t)), 8+float64(len(t)), client))
			}
		}
		// fresh: one run each, h1 and h2.
		for _, p := range []string{"h1", "h2"} {
			sc := "fresh-" + p
			v := map[string]float64{"direct": 3000, "nginx": 2500, "caddy": 1500, "envoy": 2000}[t]
			if p == "h2" {
				v -= 100
			}
			r := &result.Result{
				Schema: 1, Scenario: sc, Target: t, Proto: p, Mode: "fresh", Route: "/", Requests: 2000, RPS: rps(v),
				Latency: result.Stats{P50: 4, P99: 12}, Valid: true,
				Extra: map[string]result.Stats{"http_req_connecting": {P50: 0.5}, "http_req_tls_handshaking": {P50: 2.25}, "conn_ttfb": {P50: 3, P99: 9.5}},
			}
			if t == "envoy" && p == "h2" {
				r.Valid, r.Invalid = false, []string{"1990 new connections for 2000 requests: every request must open its own"}
			}
			rs := res(0.8, 2001, 12, 11, 0.6)
			// k6's handshakes cost it 1.5× the target's CPU; Caddy's cheap ones leave k6 2.5×;
			// nginx's dear ones (1.2 s for its 2001 connections) leave k6 the smaller user
			rs.ClientCPUSeconds = 1.2
			switch t {
			case "caddy":
				rs.ClientCPUSeconds = 2.0
			case "nginx":
				rs = res(1.2, 2001, 12, 11, 0.6)
				rs.ClientCPUSeconds = 0.9
			case "envoy":
				// 2.5× over k6's whole life, 1.6× while the requests ran: its start-up is
				// no part of what the handshakes cost it
				rs.ClientCPUSeconds = 2.0
				rs.ClientLoadCPUSeconds, rs.TargetLoadCPUSeconds = 1.2, 0.75
			}
			b.Add(sc+"-"+t+".json", r, rs)
		}
		// probes
		for _, p := range []string{"h1", "h2"} {
			for _, sc := range []string{"json", "upload", "stream", "sse"} {
				extra := map[string]result.Stats{}
				switch sc {
				case "stream":
					extra["stream_first_chunk"] = result.Stats{P50: 0.75}
				case "sse":
					extra["sse_first_event"] = result.Stats{P50: 0.5}
					extra["sse_event_gap"] = result.Stats{P50: 150}
				}
				b.Add(sc+"-"+p+"-"+t+".json", &result.Result{
					Schema: 1, Scenario: sc, Target: t, Proto: p, Mode: "probe", Route: "/" + sc,
					Requests: 5, Latency: result.Stats{P50: 1.25, P99: 2}, Extra: extra, Valid: true,
				}, nil)
			}
		}
		b.Add("ws-h1-"+t+".json", &result.Result{
			Schema: 1, Scenario: "ws", Target: t, Proto: "h1", Mode: "probe", Route: "/ws",
			Requests: 5, Latency: result.Stats{P50: 0.25}, Extra: map[string]result.Stats{"ws_connect": {P50: 1.5}, "ws_echo": {P50: 0.25}}, Valid: true,
		}, nil)
		// equal load at 2000 req/s over h1
		e := EqualLoadCell{Target: t, Proto: "h1", RateRPS: 2000, Requests: 20000, P50: 0.5, P99: 2, P999: 5, Valid: true, File: "equal-h1-" + t + ".json"}
		if t == "caddy" {
			e.Dropped, e.Requests = 37, 19963
			e.Overload = verdict.Overload(verdict.Run{Mode: "equal-load", Dropped: 37, Requests: 19963, Plan: verdict.Plan{Rate: 2000, PerIteration: 1}})
		}
		b.AddEqualLoad(e)
	}
	b.Finish()
	b.Finished = b.Started.Add(20 * time.Minute)
	return b
}
