package load

import (
	"bufio"
	"bytes"
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
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// holding is held()'s return value as a script reads it.
type holding struct{ Held, Lost int }

// connStates counts what a test server saw: connections accepted and closed, requests.
type connStates struct{ accepted, closed, requests atomic.Int64 }

func (cs *connStates) track(c *http.Server) {
	c.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			cs.accepted.Add(1)
		case http.StateClosed, http.StateHijacked:
			cs.closed.Add(1)
		}
	}
}

func (cs *connStates) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.requests.Add(1)
		h.ServeHTTP(w, r)
	})
}

// runIdle makes the script's client c of opts (URL replaced) and opens n idle connections
// within d.
func runIdle(t *testing.T, e *testEnv, url, opts string, n int, d time.Duration) result {
	t.Helper()
	js := fmt.Sprintf("(() => { globalThis.c = load.client(%s); return JSON.stringify(c.idle(%d, %d)) })()", replaceURL(opts, url), n, within(d))
	var r result
	require.NoError(t, json.Unmarshal([]byte(e.run(t, js).String()), &r))
	return r
}

// heldNow is the script's c.held().
func heldNow(t *testing.T, e *testEnv) holding {
	t.Helper()
	var h holding
	require.NoError(t, json.Unmarshal([]byte(e.run(t, "JSON.stringify(c.held())").String()), &h))
	return h
}

func idleOpts(proto string) string {
	return fmt.Sprintf(`{url: "URL", proto: %q, expectBytes: 4096, check: "ok", timeout: 300}`, proto)
}

// Every connection idle() opens carries one checked request, then stays open with nothing on
// it; held() finds every one still open, counts it, and closes it.
func TestIdleHoldsEveryConnection(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"h1c", "h1", "h2"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			var cs connStates
			srv, url := serve(t, proto, cs.count(bodyOf(4096)), cs.track)
			e := newTestEnv(t, roots(srv))
			const n = 20
			assert.Equal(t, result{Requests: n, Connections: n}, runIdle(t, e, url, idleOpts(proto), n, time.Minute))
			assert.Equal(t, []int64{n, n, 0}, []int64{cs.accepted.Load(), cs.requests.Load(), cs.closed.Load()},
				"the server's connections, requests (one on each) and connections closed while held")
			assert.Equal(t, holding{Held: n}, heldNow(t, e))
			got := e.tally()
			assert.Equal(t, float64(n), got.checksPassed, "checks passed")
			assert.Equal(t, float64(n), got.sums["connections_held"], "connections_held")
			assert.Empty(t, got.lost, "connections_lost")
			assert.Eventually(t, func() bool { return cs.closed.Load() == n }, 5*time.Second, 10*time.Millisecond, "held() closed them")
		})
	}
}

// The first connection idle() opens is the client's own: open() (the trickle across the held
// connections) sends on it, and opens none, however long after its first request (past the
// request timeout: no deadline is left on it).
func TestIdleOwnConnectionCarriesTheTrickle(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"h1c", "h2"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			var cs connStates
			srv, url := serve(t, proto, cs.count(bodyOf(4096)), cs.track)
			e := newTestEnv(t, roots(srv))
			runIdle(t, e, url, idleOpts(proto), 5, time.Minute)
			first := time.Now().Add(400 * time.Millisecond) // past idleOpts' timeout
			// 100 a second for 200 ms: 20 requests
			var r result
			js := fmt.Sprintf("JSON.stringify(c.open(%d, %d, 100))", first.UnixMilli(), first.Add(200*time.Millisecond).UnixMilli())
			require.NoError(t, json.Unmarshal([]byte(e.run(t, js).String()), &r))
			assert.Equal(t, []int{20, 0, 0}, []int{r.Requests, r.Failed, r.Connections}, "the trickle's requests, failed, connections opened")
			assert.Equal(t, []int64{5, 25}, []int64{cs.accepted.Load(), cs.requests.Load()}, "connections, requests")
			assert.Equal(t, holding{Held: 5}, heldNow(t, e))
		})
	}
}

// capListener closes every connection past its first max at once, as nginx does past its
// worker_connections.
type capListener struct {
	net.Listener
	max, n int64
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || atomic.AddInt64(&l.n, 1) <= l.max {
			return c, err
		}
		_ = c.Close()
	}
}

// A connection the server does not keep is counted by why, never waited on past the request
// timeout: refused, closed past a cap, never answered, answered wrong, not tried before the
// call's end, or closed while held.
func TestIdleCountsWhatTheServerDoesNotKeep(t *testing.T) {
	t.Parallel()
	refusedURL := func(t *testing.T) (*httptest.Server, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		require.NoError(t, ln.Close())
		return nil, "http://" + testHost + ":" + port + "/"
	}
	capped := func(proto string) func(t *testing.T) (*httptest.Server, string) {
		return func(t *testing.T) (*httptest.Server, string) {
			srv := httptest.NewUnstartedServer(bodyOf(4096))
			srv.Listener = &capListener{Listener: srv.Listener, max: 3}
			return srv, start(t, proto, srv)
		}
	}
	with := func(proto string, h http.Handler) func(t *testing.T) (*httptest.Server, string) {
		return func(t *testing.T) (*httptest.Server, string) { return serve(t, proto, h) }
	}
	tests := []struct {
		name, proto string
		server      func(t *testing.T) (*httptest.Server, string)
		within      time.Duration
		closeHeld   bool // the server closes them once they are held
		failed      int
		held        holding
		lost        map[string]float64
	}{
		{"refused", "h1c", refusedURL, time.Minute, false, 5, holding{}, map[string]float64{lostRefused: 5}},
		{"capped h1c", "h1c", capped("h1c"), time.Minute, false, 2, holding{Held: 3}, map[string]float64{lostReset: 2}},
		{"capped h2", "h2", capped("h2"), time.Minute, false, 2, holding{Held: 3}, map[string]float64{lostReset: 2}},
		{"never answered", "h1", with("h1", hang), time.Minute, false, 5, holding{}, map[string]float64{lostTimeout: 5}},
		{"answered wrong", "h2", with("h2", bodyOf(100)), time.Minute, false, 0, holding{}, map[string]float64{lostAnswer: 5}},
		{"no time left", "h1c", with("h1c", bodyOf(4096)), -time.Second, false, 0, holding{}, map[string]float64{lostUnopened: 5}},
		{"closed while held h1", "h1", with("h1", bodyOf(4096)), time.Minute, true, 0, holding{Lost: 5}, map[string]float64{lostClosed: 5}},
		{"closed while held h2", "h2", with("h2", bodyOf(4096)), time.Minute, true, 0, holding{Lost: 5}, map[string]float64{lostClosed: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, url := tc.server(t)
			var rts *httptest.Server
			if srv != nil {
				rts = srv
			}
			e := newTestEnv(t, roots(orEmpty(rts)))
			start := time.Now()
			r := runIdle(t, e, url, idleOpts(tc.proto), 5, tc.within)
			assert.Less(t, time.Since(start), 5*time.Second, "within the timeouts")
			assert.Equal(t, tc.failed, r.Failed, "failed requests")
			if tc.closeHeld {
				srv.CloseClientConnections()
				time.Sleep(50 * time.Millisecond) // the closes reach the client's sockets
			}
			assert.Equal(t, tc.held, heldNow(t, e))
			assert.Equal(t, tc.lost, e.tally().lost, "connections_lost by why")
		})
	}
}

// orEmpty is srv, or a server with no certificate when there is none (roots: nil).
func orEmpty(srv *httptest.Server) *httptest.Server {
	if srv == nil {
		return &httptest.Server{}
	}
	return srv
}

// Frames waiting on a held HTTP/2 connection are read: a PING keeps it held, a GOAWAY (the
// server telling the client to go, the connection still open) does not.
func TestHeldReadsWhatWaitsOnAnH2Connection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		then func(fr *http2.Framer)
		held holding
	}{
		{"a ping", func(fr *http2.Framer) { _ = fr.WritePing(false, [8]byte{1}) }, holding{Held: 3}},
		{"a goaway", func(fr *http2.Framer) { _ = fr.WriteGoAway(1, http2.ErrCodeNo, nil) }, holding{Lost: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			send := make(chan struct{})
			srv, url := serveThenH2(t, send, tc.then)
			e := newTestEnv(t, roots(srv))
			require.Equal(t, result{Requests: 3, Connections: 3}, runIdle(t, e, url, idleOpts("h2"), 3, time.Minute))
			close(send)
			time.Sleep(100 * time.Millisecond) // the frames reach the client's sockets
			assert.Equal(t, tc.held, heldNow(t, e))
		})
	}
}

// serveThenH2 is an HTTP/2 server on loopback that answers each connection's first stream with
// 4096 bytes, then once send is closed writes what then writes, and keeps the connection open.
func serveThenH2(t *testing.T, send <-chan struct{}, then func(*http2.Framer)) (*httptest.Server, string) {
	t.Helper()
	return serveRawH2(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := io.ReadFull(br, make([]byte, len(http2.ClientPreface))); err != nil {
			return
		}
		fr := http2.NewFramer(c, br)
		_ = fr.WriteSettings()
		var hdr bytes.Buffer
		_ = hpack.NewEncoder(&hdr).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
				_ = fr.WriteSettingsAck()
			}
			if hf, ok := f.(*http2.HeadersFrame); ok {
				_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: hf.StreamID, BlockFragment: hdr.Bytes(), EndHeaders: true})
				_ = fr.WriteData(hf.StreamID, true, []byte(strings.Repeat("x", 4096)))
				break
			}
		}
		<-send
		then(fr)
		_, _ = io.Copy(io.Discard, c) // open until the client closes it
	})
}

// run() counts its connection held when its deadline comes with the connection serving, and
// none when the end of the test cuts it off waiting on a server that never answers.
func TestRunCountsTheConnectionHeld(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		h    http.Handler
		held float64
	}{
		{"serving", bodyOf(4096), 1},
		{"never answered", hang, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, url := serve(t, "h1c", tc.h)
			e := newTestEnv(t, roots(srv))
			time.AfterFunc(time.Second, e.cancel)
			runLoop(t, e, url, `{url: "URL", proto: "h1c", expectBytes: 4096, check: "ok"}`, 200*time.Millisecond)
			assert.Equal(t, tc.held, e.tally().sums["connections_held"])
		})
	}
}
