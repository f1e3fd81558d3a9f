package load

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	for _, proto := range []string{"h1c", "h1"} {
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

// The open model runs on HTTP/1.1 only, and needs a rate.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	srv, url := serve(t, "h2", bodyOf(4096))
	e := newTestEnv(t, roots(srv))
	for _, tc := range []struct{ opts, rate, want string }{
		{`{url: "URL", proto: "h2", expectBytes: 4096, check: "ok"}`, "10", "open model runs on h1c and h1"},
		{`{url: "URL", proto: "h1", expectBytes: 4096, check: "ok"}`, "0", "rate 0"},
	} {
		_, err := e.rt.RunOnEventLoop(fmt.Sprintf("load.client(%s).open(%d, %d, %s)", replaceURL(tc.opts, url), time.Now().UnixMilli(), time.Now().UnixMilli()+100, tc.rate))
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}
