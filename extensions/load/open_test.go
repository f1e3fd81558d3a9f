package load

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runOpen makes a client of opts (URL replaced) and runs the open model from first to until
// at rate, twice when again is set (as k6 calls an iteration again before its scenario ends).
func runOpen(t *testing.T, e *testEnv, url, opts string, first, until time.Time, rate float64, again bool) []result {
	t.Helper()
	call := fmt.Sprintf("JSON.stringify(c.open(%d, %d, %v))", first.UnixMilli(), until.UnixMilli(), rate)
	calls := call
	if again {
		calls += ", " + call
	}
	js := fmt.Sprintf("(() => { const c = load.client(%s); return '[' + [%s].join(',') + ']' })()", replaceURL(opts, url), calls)
	var rs []result
	require.NoError(t, json.Unmarshal([]byte(e.run(t, js).String()), &rs))
	return rs
}

// The open model sends the requests its schedule has, no more and no fewer, on one kept-alive
// connection; called again on the same schedule (k6's next iteration) it sends nothing twice.
func TestOpenKeepsTheSchedule(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"h1c", "h1", "h2"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			srv, url := serve(t, proto, bodyOf(4096))
			e := newTestEnv(t, roots(srv))
			first := time.Now().Add(50 * time.Millisecond)
			// 100 a second for 300 ms: due at 0, 10, …, 290 ms
			rs := runOpen(t, e, url, fmt.Sprintf(`{url: "URL", proto: %q, expectBytes: 4096, check: "ok"}`, proto),
				first, first.Add(300*time.Millisecond), 100, true)
			got := e.tally()
			require.Len(t, rs, 2)
			assert.Equal(t, result{Requests: 30, Connections: 1}, rs[0], "the first call")
			assert.Equal(t, result{}, rs[1], "the same schedule again")
			assert.Equal(t, 30, got.samples["start_lag"], "start_lag samples")
			assert.Equal(t, 30.0, got.checksPassed, "checks passed")
			// until as the script gives it: whole milliseconds
			assert.False(t, time.Now().Before(time.UnixMilli(first.Add(300*time.Millisecond).UnixMilli())), "returned before the schedule's end")
		})
	}
}

// A server slower than the schedule: every request after the first is due while the one before
// is still on the connection (behind_schedule), and its latency runs from when it was due, so
// the queue shows in it (no coordinated omission).
func TestOpenMeasuresFromWhenDue(t *testing.T) {
	t.Parallel()
	const answer = 30 * time.Millisecond
	srv, url := serve(t, "h1c", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(answer)
		bodyOf(4096)(w, r)
	}))
	e := newTestEnv(t, roots(srv))
	first := time.Now().Add(20 * time.Millisecond)
	// 100 a second for 200 ms: 20 requests due 10 ms apart, each answered in 30 ms, so the
	// last is sent about 570 ms after first, 380 ms after it was due, and ends 30 ms later
	rs := runOpen(t, e, url, `{url: "URL", proto: "h1c", expectBytes: 4096, check: "ok"}`, first, first.Add(200*time.Millisecond), 100, false)
	got := e.tally()
	assert.Equal(t, 20, rs[0].Requests)
	assert.Equal(t, 19.0, got.sums["behind_schedule"], "behind_schedule")
	assert.GreaterOrEqual(t, got.max["http_req_duration"], 400.0, "the last request's latency from when it was due, ms")
	assert.GreaterOrEqual(t, got.max["start_lag"], 370.0, "how late the last request left, ms")
}

// Over HTTP/2 each request is a stream of its own, sent when due whatever is in flight: a slow
// server puts no request behind while it allows streams enough, and every request behind the
// one before once it allows one stream at a time, whose latency then runs from when it was due.
func TestOpenH2SendsEachRequestWhenDue(t *testing.T) {
	t.Parallel()
	const answer = 30 * time.Millisecond
	for _, tc := range []struct {
		name    string
		one     bool // the server allows one stream at a time (strictH2), else Go's server
		behind  float64
		minLast float64 // the largest latency from when it was due, ms, at least
		maxLast float64 // and at most
	}{
		{"streams enough", false, 0, 30, 200},
		{"one stream at a time", true, 19, 400, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var srv *httptest.Server
			var url string
			var strict *strictH2
			if tc.one {
				strict, srv, url = serveStrictH2(t, answer)
			} else {
				srv, url = serveH2(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					time.Sleep(answer)
					bodyOf(4096)(w, r)
				}), 0)
			}
			e := newTestEnv(t, roots(srv))
			first := time.Now().Add(50 * time.Millisecond)
			// 20 requests due 10 ms apart, each answered in 30 ms
			rs := runOpen(t, e, url, `{url: "URL", proto: "h2", expectBytes: 4096, check: "ok"}`, first, first.Add(200*time.Millisecond), 100, false)
			got := e.tally()
			// the last ones answer after the schedule's end: late, not failed
			assert.Equal(t, []int{20, 0, 1}, []int{rs[0].Requests, rs[0].Failed, rs[0].Connections}, "requests, failed, connections")
			assert.Equal(t, 20.0, got.checksPassed, "checks passed")
			assert.Equal(t, tc.behind, got.sums["behind_schedule"], "behind_schedule")
			assert.Equal(t, 20, got.samples["start_lag"], "start_lag samples")
			assert.GreaterOrEqual(t, got.max["http_req_duration"], tc.minLast, "the largest latency, ms")
			assert.LessOrEqual(t, got.max["http_req_duration"], tc.maxLast, "the largest latency, ms")
			if strict != nil {
				assert.Zero(t, strict.over.Load(), "streams opened beyond the server's limit of one")
			}
		})
	}
}

// A connection that fails mid-schedule fails the streams in flight on it; the requests due
// after it go out on a new one.
func TestOpenH2FailedConnection(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	var srv *httptest.Server
	srv, url := serveH2(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 5 {
			// the fifth request's connection ends without its answer, as a crash would
			srv.CloseClientConnections()
			return
		}
		bodyOf(4096)(w, r)
	}), 1) // one stream at a time: one is in flight when the connection fails, however late the client runs
	e := newTestEnv(t, roots(srv))
	first := time.Now().Add(50 * time.Millisecond)
	rs := runOpen(t, e, url, `{url: "URL", proto: "h2", expectBytes: 4096, check: "ok"}`, first, first.Add(200*time.Millisecond), 100, false)
	got := e.tally()
	assert.Equal(t, 20, rs[0].Requests, "every request due is recorded")
	assert.Equal(t, 1, rs[0].Failed, "the stream in flight when its connection failed")
	assert.Equal(t, 2, rs[0].Connections, "a new connection after the failed one")
	assert.Equal(t, 19.0, got.checksPassed, "checks passed")
}

// The open model needs a rate.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	srv, url := serve(t, "h1", bodyOf(4096))
	e := newTestEnv(t, roots(srv))
	for _, tc := range []struct{ opts, rate, want string }{
		{`{url: "URL", proto: "h1", expectBytes: 4096, check: "ok"}`, "0", "rate 0"},
	} {
		_, err := e.rt.RunOnEventLoop(fmt.Sprintf("load.client(%s).open(%d, %d, %s)", replaceURL(tc.opts, url), time.Now().UnixMilli(), time.Now().UnixMilli()+100, tc.rate))
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}
