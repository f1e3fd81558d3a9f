package verdict

import (
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }

// reusedH2 is a valid reused-h2 run of 32 connections × 16 streams through a proxy: 100 000
// requests measured, 120 000 answered over the whole run, all by the upstream.
func reusedH2() Run {
	return Run{
		Mode: "reused", ExpectedProto: "HTTP/2.0", Route: "/",
		Requests: 100000, Passes: 100000, ProtosSeen: map[string]float64{"HTTP/2.0": 100000},
		NewConnections: f64(0),
		Counts: Counts{
			Unit: "requests", Answered: 120000, Iterations: 6250, SetupOK: true,
			ConnectionsOpened: f64(32),
		},
		Plan:           Plan{ConnectionsPlanned: f64(32), ConnectionsAllowed: f64(36), Streams: 16, InFlight: 512},
		Upstream:       NewUpstream(120000, 120000, 512),
		OfferedStreams: f64(128),
	}
}

// freshH1c is a valid fresh-h1c run of 2000 requests, each on a new connection.
func freshH1c() Run {
	return Run{
		Mode: "fresh", ExpectedProto: "HTTP/1.1", Route: "/",
		Requests: 2000, Passes: 2000, ProtosSeen: map[string]float64{"HTTP/1.1": 2000},
		NewConnections: f64(2000),
		Counts:         Counts{Unit: "requests", Answered: 2001, Iterations: 2000, SetupOK: true},
		Plan:           Plan{ExpectedRequests: f64(2000), InFlight: 32},
		Upstream:       NewUpstream(2001, 2001, 32),
	}
}

// freshNative is a valid fresh-h1c run on the native loop (a floor of 2000 requests, one
// iteration for each of 32 VUs) but for its count: n requests, each on a new connection.
func freshNative(n float64) Run {
	r := freshH1c()
	r.Plan.ExpectedRequests, r.Plan.MinRequests, r.Plan.ExpectedIterations = nil, f64(2000), f64(32)
	r.Requests, r.Passes, r.NewConnections = n, n, f64(n)
	r.ProtosSeen["HTTP/1.1"], r.Counts.Iterations = n, 32
	r.Counts.Answered, r.Upstream = n+1, NewUpstream(n+1, n+1, 32)
	return r
}

// idleH1 is a valid idle run over h1: 200 connections opened (each with one request), held,
// and 100 requests trickled across a few of them in the hold.
func idleH1() Run {
	return Run{
		Mode: "idle", ExpectedProto: "HTTP/1.1", Route: "/",
		Requests: 100, Passes: 100, ProtosSeen: map[string]float64{"HTTP/1.1": 100},
		NewConnections: f64(0),
		Counts: Counts{
			Unit: "requests", Answered: 301, Iterations: 20, SetupOK: true,
			ConnectionsOpened: f64(200), ConnectionsHeld: f64(200),
		},
		Plan:     Plan{ConnectionsPlanned: f64(200), ConnectionsAllowed: f64(220), InFlight: 4},
		Upstream: NewUpstream(301, 301, 4),
	}
}

// bodiesDown is a valid run of the body-size sweep: 8 MiB downloads over h1c, 32 connections
// each carrying one at a time.
func bodiesDown() Run {
	return Run{
		Mode: "bodies", ExpectedProto: "HTTP/1.1", Route: "/bytes",
		Requests: 300, Passes: 300, ProtosSeen: map[string]float64{"HTTP/1.1": 300},
		NewConnections: f64(0),
		Counts: Counts{
			Unit: "requests", Answered: 400, Iterations: 64, SetupOK: true,
			ConnectionsOpened: f64(32),
		},
		Plan:     Plan{ConnectionsPlanned: f64(32), ConnectionsAllowed: f64(36), InFlight: 32},
		Upstream: NewUpstream(400, 400, 32),
	}
}

// streamProbe is a valid stream probe of 12 samples over h1c, on one warm connection.
func streamProbe() Run {
	return Run{
		Mode: "probe", ExpectedProto: "HTTP/1.1", Route: "/stream",
		Requests: 12, Passes: 48, ProtosSeen: map[string]float64{"HTTP/1.1": 12},
		Counts:   Counts{Unit: "requests", Answered: 14, Iterations: 12, SetupOK: true},
		Plan:     Plan{ExpectedRequests: f64(12), InFlight: 1},
		Upstream: NewUpstream(14, 14, 1),
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func() Run
		want []string // substrings, one per reason, in order; none: valid
	}{{
		name: "reused: valid",
		run:  reusedH2,
	}, {
		name: "fresh: valid",
		run:  freshH1c,
	}, {
		name: "fresh on the native loop: past its floor until its window ended",
		run:  func() Run { return freshNative(9000) },
	}, {
		name: "fresh on the native loop: short of its floor",
		run:  func() Run { return freshNative(1990) },
		want: []string{"1990 requests completed, want at least 2000"},
	}, {
		name: "reused: a window long enough, its last requests late",
		run: func() Run {
			r := reusedH2()
			r.Late = f64(512)
			return r
		},
	}, {
		name: "reused: every request of 8 MiB ended after the window",
		run: func() Run {
			r := reusedH2()
			r.Requests, r.Passes, r.Late = 32, 32, f64(32)
			r.ProtosSeen = map[string]float64{"HTTP/2.0": 32}
			r.Plan.InFlight, r.Plan.Streams = 32, 1
			r.Upstream = NewUpstream(120000, 120000, 32)
			return r
		},
		want: []string{"only 0 of 32 requests ended inside the measured window (32 after it), under 2 per request in flight (32): " +
			"a request lasts about as long as the window, so the rate is not measured; raise DURATION"},
	}, {
		name: "reused: one request a connection inside the window is still too few",
		run: func() Run {
			r := reusedH2()
			r.Requests, r.Passes, r.Late = 1535, 1535, f64(512)
			r.ProtosSeen = map[string]float64{"HTTP/2.0": 1535}
			return r
		},
		want: []string{"only 1023 of 1535 requests ended inside"},
	}, {
		name: "idle: every connection held",
		run:  idleH1,
	}, {
		name: "idle: a target capping connections below the plan, refusing and closing the rest",
		run: func() Run {
			r := idleH1()
			r.Counts.ConnectionsHeld = f64(120)
			r.Counts.ConnectionsLost = map[string]float64{"closed": 10, "refused": 50, "timeout": 20}
			return r
		},
		want: []string{"the target held 120 of the 200 connections planned at the end (50 refused, " +
			"20 not connected or not answered within the request timeout, 10 closed by the target while held): it caps connections below the plan"},
	}, {
		name: "reused: a VU the target never answered is no failed request, but a connection not held",
		run: func() Run {
			r := reusedH2()
			r.Counts.ConnectionsHeld = f64(31)
			return r
		},
		want: []string{"the target held 31 of the 32 connections planned at the end: it caps connections below the plan"},
	}, {
		name: "reused on k6/http: the connections held are not counted",
		run: func() Run {
			r := reusedH2()
			r.Counts.ConnectionsHeld = nil
			return r
		},
	}, {
		name: "a cache: the upstream answered a handful",
		run: func() Run {
			r := reusedH2()
			r.Upstream = NewUpstream(1920, 120000, 512)
			return r
		},
		want: []string{"the target answered 98.4% of requests without the upstream (a cache?): the upstream answered 1920 of the 120000 the client completed on /"},
	}, {
		name: "the requests in flight at the edges are no cache",
		run: func() Run {
			r := reusedH2()
			r.Upstream = NewUpstream(120000-512, 120000, 512)
			return r
		},
	}, {
		name: "a proxy that retries answers more, not fewer",
		run: func() Run {
			r := freshH1c()
			r.Upstream = NewUpstream(2500, 2001, 32)
			return r
		},
	}, {
		name: "a stream cap: the plan's 16 on a target offering 1",
		run: func() Run {
			r := reusedH2()
			r.OfferedStreams = f64(1)
			return r
		},
		want: []string{"the target allows 1 concurrent stream per connection; the plan needs 16"},
	}, {
		name: "a target offering exactly the plan's streams",
		run: func() Run {
			r := reusedH2()
			r.OfferedStreams = f64(16)
			return r
		},
	}, {
		name: "fresh runs put one request on a connection: no streams to offer",
		run: func() Run {
			r := freshH1c()
			r.OfferedStreams = f64(1)
			return r
		},
	}, {
		name: "a body rewritten at the same length",
		run: func() Run {
			r := reusedH2()
			r.Passes, r.Fails = 0, 100000
			r.Counts.FailedChecks = []string{"200, 4096 bytes, HTTP/2.0"}
			r.Counts.BadResponses = map[string]float64{"body": 100000}
			r.Counts.BodyDiffersAt, r.Counts.BodyBytes = f64(6), 4096
			return r
		},
		want: []string{
			"100000 of 100000 checks failed: 200, 4096 bytes, HTTP/2.0 (wrong body 100000)",
			"body differs from the upstream's at byte 6 of 4096 in 100000 responses",
		},
	}, {
		name: "bodies cut short by the target (the body-size sweep)",
		run: func() Run {
			r := bodiesDown()
			r.Passes, r.Fails, r.FailedRequests = 0, 300, 200
			r.Counts.FailedChecks = []string{"200, 8388608 bytes, HTTP/1.1"}
			r.Counts.BadResponses = map[string]float64{"status": 200, "size": 300, "proto": 200}
			r.Counts.BodyCut, r.Counts.BodyBytes = 300, 8388608
			return r
		},
		want: []string{
			"300 of 300 checks failed: 200, 8388608 bytes, HTTP/1.1 (wrong status 200, size 300, proto 200)",
			"body cut short in 300 responses: each ended before its 8388608 bytes (a 200 with fewer, or its connection or stream broken mid-body)",
			"200 requests failed",
		},
	}, {
		name: "bodies: valid",
		run:  bodiesDown,
	}, {
		name: "failed requests, wrong protocol, dropped iterations",
		run: func() Run {
			r := reusedH2()
			r.FailedRequests = 3
			r.Counts.WrongProto = 2
			r.ProtosSeen["HTTP/1.1"] = 2
			r.Dropped = 1
			return r
		},
		want: []string{"3 requests failed", "2 responses (warm-up included) over another protocol than HTTP/2.0", "2 requests over HTTP/1.1, want HTTP/2.0", "1 iterations dropped"},
	}, {
		name: "equal load: dropped iterations are its result, not a fault",
		run: func() Run {
			r := reusedH2()
			r.Mode, r.Dropped = "equal-load", 40
			return r
		},
	}, {
		name: "fresh: a reused connection",
		run: func() Run {
			r := freshH1c()
			r.NewConnections = f64(1998)
			return r
		},
		want: []string{"1998 new connections for 2000 requests: every request must open its own"},
	}, {
		name: "fresh: not all done",
		run: func() Run {
			r := freshH1c()
			r.Requests, r.Passes, r.Counts.Iterations, r.NewConnections = 1999, 1999, 1999, f64(1999)
			r.ProtosSeen["HTTP/1.1"] = 1999
			return r
		},
		want: []string{"1999 requests completed, want 2000", "1999 iterations done, want 2000"},
	}, {
		name: "fresh on the native loop: one iteration per VU, all done",
		run: func() Run {
			r := freshH1c()
			r.Counts.Iterations, r.Plan.ExpectedIterations = 32, f64(32)
			return r
		},
	}, {
		name: "fresh on the native loop: a VU's iteration not done",
		run: func() Run {
			r := freshH1c()
			r.Counts.Iterations, r.Plan.ExpectedIterations = 31, f64(32)
			return r
		},
		want: []string{"31 iterations done, want 32"},
	}, {
		name: "reused: connections not kept alive",
		run: func() Run {
			r := reusedH2()
			r.Counts.ConnectionsOpened = f64(40)
			return r
		},
		want: []string{"40 connections opened for 32 planned (one per VU, at most 36 with the margin) over 100000 measured requests"},
	}, {
		name: "a segment leaves the totals to the merge",
		run: func() Run {
			r := freshH1c()
			r.Segment, r.Requests, r.Passes, r.Counts.Iterations, r.NewConnections = true, 1000, 1000, 1000, f64(999)
			r.ProtosSeen["HTTP/1.1"] = 1000
			r.Upstream = nil
			return r
		},
	}, {
		name: "a merged run says its totals are the parts'",
		run: func() Run {
			r := reusedH2()
			r.Parts, r.Counts.ConnectionsOpened = 2, nil
			return r
		},
		want: []string{"totals: not every instance counted the connections it opened: reuse is not proven"},
	}, {
		name: "nothing measured, no checks",
		run: func() Run {
			r := reusedH2()
			r.Requests, r.Passes, r.ProtosSeen = 0, 0, nil
			return r
		},
		want: []string{"no measured requests", "no checks ran in the measured scenario"},
	}, {
		name: "a probe's findings are reasons",
		run: func() Run {
			r := freshH1c()
			r.Counts.Findings = []string{"chunks held back in 2 of 2 responses"}
			return r
		},
		want: []string{"chunks held back in 2 of 2 responses"},
	}, {
		name: "setup failed: the one reason",
		run: func() Run {
			r := freshH1c()
			r.Counts.SetupOK, r.Requests = false, 0
			return r
		},
		want: []string{"setup() failed before any load"},
	}, {
		name: "what the runner saw: the target died",
		run: func() Run {
			r := freshH1c()
			r.Faults = []string{"the target died during the run"}
			return r
		},
		want: []string{"the target died during the run"},
	}, {
		name: "a failed threshold no rule explains",
		run: func() Run {
			r := freshH1c()
			r.Counts.FailedThresholds = []string{"http_req_duration: p(99)<5"}
			return r
		},
		want: []string{"thresholds failed: http_req_duration: p(99)<5"},
	}, {
		name: "a failed threshold a rule explains is not said twice",
		run: func() Run {
			r := freshH1c()
			r.FailedRequests = 1
			r.Counts.FailedThresholds = []string{"http_req_failed{scenario:fresh-h1c}: rate==0"}
			return r
		},
		want: []string{"1 requests failed"},
	}, {
		name: "probe samples that hung: each ended by its timeout, how said",
		run: func() Run {
			r := streamProbe()
			r.Requests, r.FailedRequests, r.Passes, r.Fails = 12, 3, 36, 12
			r.Counts.Failures = map[string]float64{"stalled": 2, "timeout": 1}
			r.Counts.FailedChecks = []string{"status is 200"}
			r.Plan.SampleTimeoutMS = 10000
			return r
		},
		want: []string{
			"12 of 48 checks failed",
			"3 requests failed",
			"3 samples failed: 1 no answer within the sample's 10 s timeout (the connect, the TLS or QUIC handshake or the response's head hung); " +
				"2 the body stopped before its end and had not ended within the sample's 10 s timeout",
		},
	}, {
		name: "ws sessions upgraded then silent: no failed request, the samples said",
		run: func() Run {
			r := streamProbe()
			r.Route, r.Counts.Unit, r.Passes, r.Fails = "/ws", "WebSocket sessions", 12, 24
			r.Counts.Failures = map[string]float64{"no_welcome": 12}
			r.Plan.SampleTimeoutMS = 2500
			return r
		},
		want: []string{"24 of 36 checks failed", "12 samples failed: 12 upgraded, then no message within the sample's 2.5 s timeout"},
	}, {
		name: "a why this verdict does not know, from an older result without the timeout",
		run: func() Run {
			r := streamProbe()
			r.Counts.Failures = map[string]float64{"refused": 1, "gone_fishing": 1}
			return r
		},
		want: []string{"2 samples failed: 1 connection refused; 1 gone_fishing"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Judge(tc.run())
			if len(got) != len(tc.want) {
				t.Fatalf("reasons %q, want %q", got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("reason %d: %q, want %q in it", i, got[i], w)
				}
			}
		})
	}
}

func TestCountsAdd(t *testing.T) {
	t.Parallel()
	sum := &Counts{SetupOK: true}
	sum.Add(&Counts{
		Unit: "requests", Answered: 10, Iterations: 10, SetupOK: true, BadResponses: map[string]float64{"body": 2},
		BodyDiffersAt: f64(9), BodyBytes: 4096, FailedChecks: []string{"c"},
	}, "segment 1/2")
	sum.Add(&Counts{
		Unit: "requests", Answered: 5, Iterations: 5, SetupOK: false, BadResponses: map[string]float64{"body": 1},
		BodyDiffersAt: f64(6), BodyBytes: 4096, FailedChecks: []string{"c"}, Findings: []string{"late"},
		Failures: map[string]float64{"timeout": 1}, ConnectionsHeld: f64(16), ConnectionsLost: map[string]float64{"reset": 2}, BodyCut: 2,
	}, "segment 2/2")
	if sum.BodyCut != 2 {
		t.Errorf("sum %+v: want the 2 bodies segment 2 saw cut short", sum)
	}
	if sum.Failures["timeout"] != 1 {
		t.Errorf("sum %+v: want the failed sample of segment 2", sum)
	}
	if sum.ConnectionsHeld == nil || *sum.ConnectionsHeld != 16 || sum.ConnectionsLost["reset"] != 2 {
		t.Errorf("sum %+v: want the connections segment 2 held (16) and lost (2 reset)", sum)
	}
	if sum.Answered != 15 || sum.Iterations != 15 || sum.BadResponses["body"] != 3 || *sum.BodyDiffersAt != 6 {
		t.Errorf("sum %+v: want answered 15, iterations 15, body 3, first difference at 6", sum)
	}
	if sum.SetupOK || len(sum.FailedChecks) != 1 || len(sum.Findings) != 1 || sum.Findings[0] != "segment 2/2: late" {
		t.Errorf("sum %+v: want setup not ok, one check name, the finding labelled", sum)
	}
}

// TestPacing: a paced probe's cell is held back when more than half its responses were, by
// either rule; fewer is said beside the cell (Sporadic), never a reason.
func TestPacing(t *testing.T) {
	t.Parallel()
	pacing := func(responses, first, together float64) *Pacing {
		p := &Pacing{
			Part: "chunk", Parts: "chunks", IntervalMS: 50, TogetherMS: 5, StallOverMS: 75,
			Responses: responses, FirstHeld: first, TogetherHeld: together,
		}
		if first > 0 {
			p.FirstMaxMS = f64(152.34)
		}
		if together > 0 {
			p.TogetherMinMS = f64(0.004)
		}
		return p
	}
	tests := []struct {
		name     string
		pacing   *Pacing
		want     []string
		sporadic string
	}{
		{name: "not a paced probe"},
		{name: "on the beat", pacing: pacing(12, 0, 0)},
		{name: "held back, every response", pacing: pacing(2, 2, 2), want: []string{
			"first chunk held back in 2 of 2 responses: want it before the upstream sends the next, 50 ms after the request; got up to 152.3 ms",
			"chunks released together in 2 of 2 responses: two came 0 ms apart, want at least 5 ms (the upstream sends them 50 ms apart or more)",
		}},
		{name: "released together in most", pacing: pacing(12, 0, 7), want: []string{"chunks released together in 7 of 12 responses"}},
		{
			name: "half is not most", pacing: pacing(2, 1, 1),
			sporadic: "first chunk held back in 1 and chunks released together in 1 of 2 responses: not more than half, so not judged",
		},
		{
			name: "one of twelve, a busy client", pacing: pacing(12, 0, 1),
			sporadic: "chunks released together in 1 of 12 responses: not more than half",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := streamProbe()
			r.Pacing = tc.pacing
			got := Judge(r)
			if len(got) != len(tc.want) {
				t.Fatalf("Judge = %q, want %d reasons like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("reason %d = %q, want it to start %q", i, got[i], w)
				}
			}
			if s := tc.pacing.Sporadic(); !strings.HasPrefix(s, tc.sporadic) || (tc.sporadic == "") != (s == "") {
				t.Errorf("Sporadic = %q, want %q", s, tc.sporadic)
			}
		})
	}
}

// A capacity step holds when the run is valid, keeps its schedule and its p99 within the goal.
func TestHeld(t *testing.T) {
	t.Parallel()
	ok := Run{
		Mode: "equal-load", ExpectedProto: "HTTP/1.1", Route: "/", Requests: 1000,
		Passes: 1000, ProtosSeen: map[string]float64{"HTTP/1.1": 1000}, Behind: f64(3),
		Counts: Counts{Answered: 1000, Iterations: 1000, SetupOK: true}, Plan: Plan{Rate: 2000, InFlight: 32},
	}
	late := ok
	late.Behind = f64(50)
	broken := ok
	broken.Fails, broken.Passes = 10, 990
	for _, tc := range []struct {
		name string
		r    Run
		p99  float64
		want string
	}{
		{"held", ok, 4, ""},
		{"at the goal", ok, 10, ""},
		{"p99 over the goal", ok, 12.5, "p99 12.5 ms over the goal of 10 ms"},
		{"behind schedule", late, 4, "could not sustain 2000 req/s: 50 of 1000 requests were due"},
		{"invalid", broken, 4, "invalid: 10 of 1000 checks failed"},
	} {
		if got := Held(tc.r, tc.p99, 10); (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: Held = %q, want %q", tc.name, got, tc.want)
		}
	}
}
