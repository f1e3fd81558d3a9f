package sse

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// h3Server serves h over HTTP/3 on 127.0.0.1:0 (UDP) with httptest's certificate (valid for
// 127.0.0.1), counting the QUIC connections it accepts.
type h3Server struct {
	url      string // https://127.0.0.1:PORT
	roots    *x509.CertPool
	accepted atomic.Int64
}

func newH3Server(t *testing.T, h http.Handler) *h3Server {
	t.Helper()
	// httptest makes the certificate; its TCP listener is not used.
	ts := httptest.NewUnstartedServer(h)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())

	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	s := &h3Server{
		url:   fmt.Sprintf("https://127.0.0.1:%d", conn.LocalAddr().(*net.UDPAddr).Port), //nolint:forcetypeassert // a UDP socket
		roots: roots,
	}
	srv := &http3.Server{
		Handler:   h,
		TLSConfig: &tls.Config{Certificates: ts.TLS.Certificates, MinVersion: tls.VersionTLS13},
		ConnContext: func(ctx context.Context, _ *quic.Conn) context.Context {
			s.accepted.Add(1)
			return ctx
		},
	}
	go func() { _ = srv.Serve(conn) }()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = conn.Close()
	})
	return s
}

// newH3TestEnv is a VU whose TLS config trusts srv: k6/x/proxybench/http3 dials with the VU's TLS config.
func newH3TestEnv(t *testing.T, srv *h3Server) *testEnv {
	t.Helper()
	env := newTestEnv(t, http.DefaultTransport)
	env.rt.VU.StateField.TLSConfig = &tls.Config{RootCAs: srv.roots, MinVersion: tls.VersionTLS13}
	return env
}

// TestHTTP3 runs get and stream over HTTP/3 (the http3 param): events and chunks are timed as
// they arrive, a buffered body shows, and calls share the VU's one QUIC connection.
func TestHTTP3(t *testing.T) {
	t.Parallel()

	streamed := newH3Server(t, sseHandler(3, 150*time.Millisecond, false))
	buffered := newH3Server(t, sseHandler(3, 150*time.Millisecond, true))
	chunked := newH3Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for i := range 3 {
			if i > 0 {
				time.Sleep(150 * time.Millisecond)
			}
			_, _ = w.Write([]byte("0123456789"))
			w.(http.Flusher).Flush() //nolint:forcetypeassert // the test server's ResponseWriter is one
		}
	}))

	tests := []struct {
		name  string
		srv   *h3Server
		fn    string
		check func(t *testing.T, res jsResult)
	}{
		{"get streamed", streamed, "get", func(t *testing.T, res jsResult) {
			require.Len(t, res.Events, 3)
			require.NotNil(t, res.FirstEventMS)
			assert.Less(t, *res.FirstEventMS, 100.0, "the first event comes at once")
			assert.Equal(t, "tick", res.Events[0].Event)
		}},
		{"get buffered", buffered, "get", func(t *testing.T, res jsResult) {
			require.Len(t, res.Events, 3)
			require.NotNil(t, res.FirstEventMS)
			assert.Greater(t, *res.FirstEventMS, 300.0, "a buffered body shows as a late first event")
		}},
		{"stream", chunked, "stream", func(t *testing.T, res jsResult) {
			assert.Equal(t, int64(30), res.Bytes)
			require.Len(t, res.ChunksMS, 3, "one read per flushed chunk")
			assert.Less(t, *res.FirstChunkMS, 100.0)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newH3TestEnv(t, tc.srv)
			for range 2 {
				res := env.mustCall(t, tc.fn, tc.srv.url+"/sse?count=3", `{http3: true, timeout: "5s"}`)
				require.Equal(t, 200, res.Status, res.Error)
				assert.Equal(t, "HTTP/3.0", res.Proto)
				tc.check(t, res)
			}
			assert.Equal(t, int64(1), tc.srv.accepted.Load(), "two calls, one QUIC connection")
		})
	}
}

// TestHTTP3Expect: the expect param holds the body to its bytes over HTTP/3 as over h1 and h2.
func TestHTTP3Expect(t *testing.T) {
	t.Parallel()

	srv := newH3Server(t, patternHandler(t))
	expect := strings.Repeat(string(upstream.Pattern(4096)), 4)
	for path, want := range map[string]int64{"/stream": -1, "/stream?flip=6": 4096 + 6} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			env := newH3TestEnv(t, srv)
			require.NoError(t, env.rt.VU.Runtime().Set("EXPECT", expect))
			res := env.mustCall(t, "stream", srv.url+path, `{http3: true, timeout: "5s", expect: EXPECT}`)
			require.Equal(t, 200, res.Status, res.Error)
			assert.Equal(t, "HTTP/3.0", res.Proto)
			assert.Equal(t, int64(len(expect)), res.Bytes)
			require.NotNil(t, res.BodyDiffersAt)
			assert.Equal(t, want, *res.BodyDiffersAt)
		})
	}
}

// TestHTTP3Stall: a stream that stops after its first event ends at the timeout over HTTP/3 as
// over h1 and h2: a request timeout (1050), the head and the event kept.
func TestHTTP3Stall(t *testing.T) {
	t.Parallel()
	srv := newH3Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: tick\ndata: 0\n\n")
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}))
	env := newH3TestEnv(t, srv)
	start := time.Now()
	res := env.mustCall(t, "get", srv.url+"/sse", `{http3: true, timeout: "400ms"}`)
	took := time.Since(start)
	assert.Equal(t, 1050, res.ErrorCode, res.Error)
	assert.NotNil(t, res.FirstByteMS, "the head came")
	assert.Len(t, res.Events, 1)
	assert.GreaterOrEqual(t, took, 400*time.Millisecond, "only the timeout ended it")
	assert.Less(t, took, time.Second, "the timeout ended it")
}

func TestHTTP3ParamErrors(t *testing.T) {
	t.Parallel()
	srv := newH3Server(t, sseHandler(1, 0, false))
	tests := []struct {
		name, url, params, want string
	}{
		{"not a boolean", srv.url + "/sse", `{http3: "yes"}`, `sse.get() http3 must be true or false, got yes`},
		{"cleartext URL", "http://127.0.0.1:1/sse", `{http3: true}`, `sse.get() http3: true needs an https:// URL`},
		{"no QUIC server", "https://127.0.0.1:1/sse", `{http3: true, timeout: "300ms"}`, `request timeout`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newH3TestEnv(t, srv)
			res := env.mustCall(t, "get", tc.url, tc.params)
			assert.Equal(t, 0, res.Status)
			assert.Contains(t, res.Error, tc.want)
		})
	}
	t.Run("false is over k6's own transport", func(t *testing.T) {
		t.Parallel()
		h1 := newServer(t, sseHandler(1, 0, false))
		env := newTestEnv(t, h1.Client().Transport)
		res := env.mustCall(t, "get", h1.URL+"/sse", `{http3: false}`)
		assert.Equal(t, 200, res.Status, res.Error)
		assert.Equal(t, "HTTP/1.1", res.Proto)
	})
}
