package load

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hang never answers; it returns when the client closes the connection (the server's
// Close waits for it).
var hang = http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })

// result is run()'s return value as a script reads it.
type result struct {
	Requests, Failed, Late, Connections int
}

// runLoop makes a client of opts (a JS object literal; URL replaced) and runs it for d.
func runLoop(t *testing.T, e *testEnv, url, opts string, d time.Duration) result {
	t.Helper()
	js := fmt.Sprintf("const c = load.client(%s); JSON.stringify(c.run(%d))", strings.ReplaceAll(opts, "URL", url), within(d))
	var r result
	require.NoError(t, json.Unmarshal([]byte(e.run(t, "(() => {"+strings.Replace(js, "JSON.stringify", "return JSON.stringify", 1)+"})()").String()), &r))
	return r
}

// Every answer is verified and counted the way k6/http and checks.js count it: one check and
// one http_req_duration per request, the counters summed, each wrong answer with its reason.
func TestRunVerifiesEveryAnswer(t *testing.T) {
	t.Parallel()
	closeEach := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		bodyOf(4096)(w, r)
	})
	chunked := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for range 4 {
			_, _ = w.Write(make([]byte, 1024))
			w.(http.Flusher).Flush() // no Content-Length: chunked
		}
	})
	status := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(make([]byte, 4096))
	})
	tests := []struct {
		name, proto string
		handler     http.Handler
		streams     int
		wantBad     []string // bad_responses reasons, every request
		oneConn     bool     // every request on the first connection
	}{
		{"h1c", "h1c", bodyOf(4096), 1, nil, true},
		{"h1 over TLS", "h1", bodyOf(4096), 1, nil, true},
		{"h2, 8 streams", "h2", bodyOf(4096), 8, nil, true},
		{"h1c chunked", "h1c", chunked, 1, nil, true},
		{"h2 chunked writes", "h2", chunked, 4, nil, true},
		{"h1c short body", "h1c", bodyOf(4095), 1, []string{"size"}, true},
		{"h2 long body", "h2", bodyOf(4097), 4, []string{"size"}, true},
		{"h1c 503", "h1c", status, 1, []string{"status"}, true},
		{"h2 503", "h2", status, 2, []string{"status"}, true},
		{"h1c, the server closes after each answer", "h1c", closeEach, 1, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, url := serve(t, tc.proto, tc.handler)
			e := newTestEnv(t, roots(srv))
			r := runLoop(t, e, url, fmt.Sprintf(`{url: "URL", proto: %q, streams: %d, expectBytes: 4096, check: "ok", tags: {route: "/"}}`, tc.proto, tc.streams), 300*time.Millisecond)
			got := e.tally()
			require.Positive(t, r.Requests)
			n := float64(r.Requests)
			assert.Equal(t, n, got.requests(), "http_reqs")
			assert.Equal(t, r.Requests, got.durations, "http_req_duration samples")
			assert.Equal(t, r.Requests, got.waits, "http_req_waiting samples")
			assert.Equal(t, r.Requests, got.checks, "checks samples")
			assert.Equal(t, float64(r.Connections), got.newConns, "new_connections")
			want := map[string]bool{"HTTP/1.1": true}
			if tc.proto == "h2" {
				want = map[string]bool{"HTTP/2.0": true}
			}
			assert.Equal(t, want, got.protos, "proto tags")
			if tc.oneConn {
				assert.Equal(t, 1, r.Connections, "connections")
			} else {
				assert.Equal(t, r.Requests, r.Connections, "a connection per request")
			}
			if len(tc.wantBad) == 0 {
				assert.Equal(t, n, got.checksPassed, "checks passed")
				assert.Empty(t, got.bad, "bad_responses")
				assert.Zero(t, r.Failed)
				return
			}
			assert.Zero(t, got.checksPassed, "checks passed")
			for _, why := range tc.wantBad {
				assert.Equal(t, n, got.bad[why], "bad_responses{why:%s}", why)
			}
			assert.Len(t, got.bad, len(tc.wantBad))
			if tc.wantBad[0] == "status" {
				assert.Equal(t, n, got.failed, "http_req_failed")
				assert.Equal(t, r.Requests, r.Failed)
			}
		})
	}
}

// h2 keeps the streams asked for in flight, never more than the server allows.
func TestRunH2Streams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		streams, serverMax int
		want               int32
	}{
		{"as many as asked", 6, 0, 6},
		{"the server's limit", 6, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var now, peak atomic.Int32
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := now.Add(1)
				for p := peak.Load(); n > p; p = peak.Load() {
					if peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(5 * time.Millisecond)
				now.Add(-1)
				bodyOf(4096)(w, r)
			})
			srv, url := serveH2(t, h, uint32(tc.serverMax))
			e := newTestEnv(t, roots(srv))
			r := runLoop(t, e, url, fmt.Sprintf(`{url: "URL", proto: "h2", streams: %d, expectBytes: 4096, check: "ok"}`, tc.streams), 300*time.Millisecond)
			require.Positive(t, r.Requests)
			assert.Equal(t, tc.want, peak.Load(), "streams in flight at most")
			assert.Equal(t, 1, r.Connections)
		})
	}
}

// A kept-alive connection the server closed while it sat idle between two calls (k6's gap
// between warm-up and measurement) is replaced without a failed request: closed politely (its
// idle timeout: h1 closes, h2 sends GOAWAY first) or abruptly (the TCP connection alone, no
// GOAWAY: the loop learns it only when it writes the next streams).
func TestRunSurvivesAnIdleClose(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		proto  string
		abrupt bool
	}{{"h1c", false}, {"h1c", true}, {"h2", false}, {"h2", true}} {
		t.Run(fmt.Sprintf("%s abrupt=%v", tc.proto, tc.abrupt), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewUnstartedServer(bodyOf(4096))
			conns := make(chan net.Conn, 4)
			if tc.abrupt {
				srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
					if st == http.StateNew {
						conns <- c
					}
				}
			} else {
				srv.Config.IdleTimeout = 50 * time.Millisecond
			}
			scheme := "http"
			if tc.proto == "h2" {
				srv.EnableHTTP2 = true
				srv.StartTLS()
				scheme = "https"
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			url := scheme + "://" + testHost + ":" + port + "/"
			e := newTestEnv(t, roots(srv))
			streams := map[string]int{"h1c": 1, "h2": 2}[tc.proto]
			js := fmt.Sprintf(`const c = load.client({url: %q, proto: %q, streams: %d, expectBytes: 4096, check: "ok"});`, url, tc.proto, streams)
			e.run(t, js+fmt.Sprintf("globalThis.c = c; c.run(%d);", within(100*time.Millisecond)))
			if tc.abrupt {
				c := <-conns
				if tc, ok := c.(*tls.Conn); ok {
					c = tc.NetConn() // no close_notify, no GOAWAY: the socket alone
				}
				require.NoError(t, c.Close())
			}
			time.Sleep(300 * time.Millisecond) // the server has closed the idle connection
			var r result
			require.NoError(t, json.Unmarshal([]byte(e.run(t, fmt.Sprintf("JSON.stringify(c.run(%d))", within(100*time.Millisecond))).String()), &r))
			assert.Positive(t, r.Requests)
			assert.Zero(t, r.Failed, "failed requests after the idle close")
			assert.Equal(t, 1, r.Connections, "a new connection for the second call")
			got := e.tally()
			assert.Equal(t, float64(got.checks), got.checksPassed, "checks")
		})
	}
}

// Requests that end after until are counted in late_requests; run() returns once they end.
func TestRunCountsLateRequests(t *testing.T) {
	t.Parallel()
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		bodyOf(4096)(w, r)
	})
	srv, url := serve(t, "h1c", slow)
	e := newTestEnv(t, roots(srv))
	r := runLoop(t, e, url, `{url: "URL", proto: "h1c", expectBytes: 4096, check: "ok"}`, 50*time.Millisecond)
	assert.Equal(t, result{Requests: 1, Late: 1, Connections: 1}, r)
	assert.Equal(t, 1.0, e.tally().late)
}

// A connection that cannot carry the protocol, or a server that never answers, ends the call
// with one failed request that says so; nothing hangs.
func TestRunFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, serverProto, proto string
		handler                  http.Handler
		opts                     string
		wantCode                 string
	}{
		{"h2 against a server without h2", "h1", "h2", bodyOf(4096), "", "1000"},
		{"no answer within the timeout", "h1c", "h1c", hang, "timeout: 200,", "1050"},
		{"nothing listens", "", "h1c", nil, "", "1000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e *testEnv
			url := "http://" + testHost + ":1/" // nothing listens on port 1
			if tc.serverProto != "" {
				var srv *httptest.Server
				srv, url = serve(t, tc.serverProto, tc.handler)
				e = newTestEnv(t, roots(srv))
			} else {
				e = newTestEnv(t, nil)
			}
			start := time.Now()
			r := runLoop(t, e, url, fmt.Sprintf(`{url: "URL", proto: %q, %s expectBytes: 4096, check: "ok"}`, tc.proto, tc.opts), 5*time.Second)
			assert.Less(t, time.Since(start), 3*time.Second, "the failure ends the call")
			assert.Equal(t, 1, r.Requests)
			assert.Equal(t, 1, r.Failed)
			got := e.tally()
			assert.Equal(t, map[string]bool{tc.wantCode: true}, got.errorCodes, "error_code tags")
			assert.Equal(t, 1.0, got.failed, "http_req_failed")
			assert.Zero(t, got.checksPassed)
			assert.Zero(t, got.durations, "no duration without an answer, as k6/http")
		})
	}
}

// The end of the test (the VU's context) unblocks a loop waiting on a silent server at once,
// and what it cut off is not recorded as failed.
func TestRunStopsWithTheContext(t *testing.T) {
	t.Parallel()
	srv, url := serve(t, "h2", hang)
	e := newTestEnv(t, roots(srv))
	time.AfterFunc(200*time.Millisecond, e.cancel)
	start := time.Now()
	r := runLoop(t, e, url, `{url: "URL", proto: "h2", streams: 4, expectBytes: 4096, check: "ok"}`, time.Minute)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, result{Connections: 1}, r)
}

// A stream the server never answers fails within the timeout even while the connection's other
// streams keep answering, with k6's timeout code: it is not lost, and it does not hold a slot.
func TestRunH2LostStreamTimesOut(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv, url := serveH2(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 3 {
			<-r.Context().Done() // lost: never answered
			return
		}
		bodyOf(4096)(w, r)
	}), 0)
	e := newTestEnv(t, roots(srv))
	start := time.Now()
	r := runLoop(t, e, url, `{url: "URL", proto: "h2", streams: 4, expectBytes: 4096, check: "ok", timeout: 300}`, 3*time.Second)
	assert.Less(t, time.Since(start), 2*time.Second, "the lost stream ended the call within its timeout")
	assert.Positive(t, r.Failed)
	got := e.tally()
	assert.True(t, got.errorCodes["1050"], "error_code 1050 among %v", got.errorCodes)
	assert.Equal(t, float64(r.Failed), got.failed, "http_req_failed")
}

// An answer over HTTP/1.0 is counted as such, tagged with its own protocol: the check fails
// for the protocol, and the run's protocols say HTTP/1.0.
func TestRunTagsTheProtocolAnswered(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	answer := "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4096\r\n\r\n" + strings.Repeat("x", 4096)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					if _, err := io.WriteString(c, answer); err != nil {
						return
					}
				}
			}()
		}
	}()
	e := newTestEnv(t, nil)
	url := "http://" + testHost + ":" + strings.Split(ln.Addr().String(), ":")[1] + "/"
	r := runLoop(t, e, url, `{url: "URL", proto: "h1c", expectBytes: 4096, check: "ok"}`, 200*time.Millisecond)
	require.Positive(t, r.Requests)
	got := e.tally()
	assert.Equal(t, map[string]bool{"HTTP/1.0": true}, got.protos)
	assert.Equal(t, float64(r.Requests), got.bad["proto"], "bad_responses{why:proto}")
	assert.Equal(t, float64(r.Requests), got.wrongProto, "wrong_proto")
	assert.Zero(t, got.checksPassed)
	assert.Equal(t, 1, r.Connections, "HTTP/1.0 with keep-alive keeps the connection")
}

// Options are checked when the client is made, naming the option at fault.
func TestClientOptions(t *testing.T) {
	t.Parallel()
	tests := []struct{ opts, want string }{
		{`{url: "http://a/", proto: "h3", check: "c"}`, "proto \"h3\""},
		{`{url: "/relative", proto: "h1c", check: "c"}`, "is not an absolute URL"},
		{`{url: "https://a/", proto: "h1c", check: "c"}`, "needs a http:// URL"},
		{`{url: "http://a/", proto: "h1", check: "c"}`, "needs a https:// URL"},
		{`{url: "http://a/", proto: "h1c", streams: 2, check: "c"}`, "streams 2"},
		{`{url: "http://a/", proto: "h1c", expectBytes: -1, check: "c"}`, "expectBytes -1"},
		{`{url: "http://a/", proto: "h1c", expectBytes: 10, expect: "abc", check: "c"}`, "expectBytes 10, but expect is a body of 3 bytes"},
		{`{url: "http://a/", proto: "h1c", expect: "a", expectRepeat: "b", check: "c"}`, "expect and expectRepeat"},
		{`{url: "http://a/", proto: "h1c", uploadBytes: 10, check: "c"}`, "uploadBytes 10: a GET sends no body"},
		{`{url: "http://a/", proto: "h1c", method: "POST", uploadBytes: -1, uploadText: "x", check: "c"}`, "uploadBytes -1"},
		{`{url: "http://a/", proto: "h1c", method: "POST", uploadBytes: 10, check: "c"}`, "uploadText: give the text"},
		{`{url: "http://a/", proto: "h1c", method: "DELETE", check: "c"}`, "method \"DELETE\""},
		{`{url: "http://a/", proto: "h1c"}`, "check:"},
		{`{url: "http://a/", proto: "h1c", check: "c", timeout: -5}`, "timeout -5"},
		{``, "give the options"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, nil)
			_, err := e.rt.RunOnEventLoop("load.client(" + tc.opts + ")")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
