package load

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib/netext"
	"go.k6.io/k6/v2/lib/types"
)

// runFresh makes a client of opts (URL replaced) and sends n fresh requests.
func runFresh(t *testing.T, e *testEnv, url, opts string, n int) result {
	t.Helper()
	js := fmt.Sprintf("(() => { const c = load.client(%s); return JSON.stringify(c.fresh(%d, %d)) })()",
		replaceURL(opts, url), n, within(time.Minute))
	var r result
	require.NoError(t, json.Unmarshal([]byte(e.run(t, js).String()), &r))
	return r
}

// Every fresh request opens its own connection, seen by the server as well as counted by the
// client, times its handshakes as k6/http does, and is checked as a reused one is.
func TestFreshOpensAConnectionPerRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, proto string
		bytes       int
		wantBad     string
	}{
		{"h1c", "h1c", 4096, ""},
		{"h1 over TLS", "h1", 4096, ""},
		{"h2", "h2", 4096, ""},
		{"h1c short body", "h1c", 4095, "size"},
		{"h2 long body", "h2", 4097, "size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var accepted, keepAlive atomic.Int64
			srv, url := serve(t, tc.proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !r.Close && r.ProtoMajor == 1 {
					keepAlive.Add(1) // an HTTP/1.1 fresh request asks the server to close
				}
				bodyOf(tc.bytes)(w, r)
			}), func(c *http.Server) {
				c.ConnState = func(_ net.Conn, s http.ConnState) {
					if s == http.StateNew {
						accepted.Add(1)
					}
				}
			})
			e := newTestEnv(t, roots(srv))
			const n = 25
			r := runFresh(t, e, url, fmt.Sprintf(`{url: "URL", proto: %q, expectBytes: 4096, check: "ok"}`, tc.proto), n)
			got := e.tally()
			assert.Equal(t, n, r.Requests, "requests")
			assert.Equal(t, n, r.Connections, "connections the client opened")
			assert.Equal(t, int64(n), accepted.Load(), "connections the server accepted")
			assert.Zero(t, keepAlive.Load(), "requests without Connection: close")
			assert.Equal(t, float64(n), got.newConns, "new_connections")
			assert.Equal(t, n, got.samples["http_req_connecting"], "http_req_connecting samples")
			assert.Equal(t, n, got.samples["conn_ttfb"], "conn_ttfb samples")
			tlsSamples := 0
			if tc.proto != "h1c" {
				tlsSamples = n
				assert.Positive(t, got.sums["http_req_tls_handshaking"], "TLS handshakes timed")
			}
			assert.Equal(t, tlsSamples, got.samples["http_req_tls_handshaking"], "http_req_tls_handshaking samples")
			// the new connection to the first byte holds the handshakes and the wait
			assert.GreaterOrEqual(t, got.sums["conn_ttfb"], got.sums["http_req_connecting"]+got.sums["http_req_tls_handshaking"])
			if tc.wantBad == "" {
				assert.Equal(t, float64(n), got.checksPassed, "checks passed")
				assert.Empty(t, got.bad, "bad_responses")
				return
			}
			assert.Zero(t, got.checksPassed, "checks passed")
			assert.Equal(t, map[string]float64{tc.wantBad: n}, got.bad, "bad_responses")
		})
	}
}

// A server that is gone fails each fresh request on its own dial, and the loop goes on to the
// next: every request is counted, none is timed.
func TestFreshCountsFailedDials(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, port, _ := net.SplitHostPort(addr)
	e := newTestEnv(t, nil)
	r := runFresh(t, e, "http://"+testHost+":"+port+"/", `{url: "URL", proto: "h1c", expectBytes: 4096, check: "ok"}`, 3)
	got := e.tally()
	assert.Equal(t, result{Requests: 3, Failed: 3}, r)
	assert.Zero(t, got.samples["http_req_connecting"], "a failed dial is not timed")
	assert.Equal(t, 3.0, got.failed, "http_req_failed")
}

// The fresh loop dials as k6's dialer would (the hosts option maps the URL's name, as every
// test here relies on): a blocked hostname fails every request with nothing dialled, and the
// bytes of the requests that went count in the dialer's counters (data_sent, data_received).
func TestFreshDialsAsK6Would(t *testing.T) {
	t.Parallel()
	t.Run("blocked hostname", func(t *testing.T) {
		t.Parallel()
		var accepted atomic.Int64
		srv, url := serve(t, "h1c", bodyOf(4096), func(c *http.Server) {
			c.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					accepted.Add(1)
				}
			}
		})
		e := newTestEnv(t, roots(srv))
		blocked, err := types.NewHostnameTrie([]string{testHost})
		require.NoError(t, err)
		dialer(t, e).BlockedHostnames = blocked
		r := runFresh(t, e, url, `{url: "URL", proto: "h1c", expectBytes: 4096, check: "ok"}`, 3)
		assert.Equal(t, result{Requests: 3, Failed: 3}, r)
		assert.Zero(t, accepted.Load(), "connections the server accepted")
	})
	t.Run("byte counters", func(t *testing.T) {
		t.Parallel()
		srv, url := serve(t, "h1c", bodyOf(4096))
		e := newTestEnv(t, roots(srv))
		r := runFresh(t, e, url, `{url: "URL", proto: "h1c", expectBytes: 4096, check: "ok"}`, 4)
		require.Equal(t, 4, r.Requests)
		d := dialer(t, e)
		assert.Greater(t, d.BytesRead, int64(4*4096), "bytes read: 4 answers of 4096 bytes and their heads")
		assert.Positive(t, d.BytesWritten, "bytes written")
	})
}

// dialer is the test VU's k6 dialer.
func dialer(t *testing.T, e *testEnv) *netext.Dialer {
	t.Helper()
	d, ok := e.rt.VU.StateField.Dialer.(*netext.Dialer)
	require.True(t, ok)
	return d
}
