package sse

import (
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/js/modulestest"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
	"gopkg.in/guregu/null.v3"
)

// jsResult mirrors what sse.get()/sse.stream() return, read back through
// JSON.stringify so that the test sees exactly what a script sees.
type jsResult struct {
	Status      int               `json:"status"`
	Proto       string            `json:"proto"`
	Headers     map[string]string `json:"headers"`
	Bytes       int64             `json:"bytes"`
	FirstByteMS *float64          `json:"first_byte_ms"`
	Events      []struct {
		Event string  `json:"event"`
		Data  string  `json:"data"`
		ID    string  `json:"id"`
		AtMS  float64 `json:"at_ms"`
	} `json:"events"`
	FirstEventMS *float64  `json:"first_event_ms"`
	GapsMS       []float64 `json:"gaps_ms"`
	ChunksMS     []float64 `json:"chunks_ms"`
	ChunksBytes  []int64   `json:"chunks_bytes"`
	FirstChunkMS *float64  `json:"first_chunk_ms"`
	// nil when the result has no body_differs_at (no expect param)
	BodyDiffersAt *int64  `json:"body_differs_at"`
	DurationMS    float64 `json:"duration_ms"`
	Error         string  `json:"error"`
	ErrorCode     int     `json:"error_code"`
}

type testEnv struct {
	rt      *modulestest.Runtime
	samples chan metrics.SampleContainer
}

// newTestEnv is a VU in its VU context, with the module bound to the global
// `sse` and transport as its state.Transport.
func newTestEnv(t *testing.T, transport http.RoundTripper) *testEnv {
	t.Helper()

	rt := modulestest.NewRuntime(t)
	mi := New().NewModuleInstance(rt.VU)
	require.NoError(t, rt.VU.Runtime().Set("sse", mi.Exports().Named))

	logger := logrus.New()
	logger.SetOutput(io.Discard)
	registry := rt.VU.InitEnvField.Registry
	samples := make(chan metrics.SampleContainer, 1000)
	rt.MoveToVUContext(&lib.State{
		Options: lib.Options{
			SystemTags:   &metrics.DefaultSystemTagSet,
			MaxRedirects: null.IntFrom(10),
			UserAgent:    null.StringFrom("sse-test"),
		},
		Logger:     logger,
		Transport:  transport,
		BufferPool: lib.NewBufferPool(),
		Samples:    samples,
		Tags: lib.NewVUStateTags(registry.RootTagSet().WithTagsFromMap(map[string]string{
			"group": lib.RootGroupPath,
		})),
		BuiltinMetrics: rt.BuiltinMetrics,
	})
	return &testEnv{rt: rt, samples: samples}
}

// call runs `sse.<fn>(url, <params>)` on the event loop.
func (e *testEnv) call(t *testing.T, fn, url, params string) (jsResult, error) {
	t.Helper()

	if params == "" {
		params = "undefined"
	}
	v, err := e.rt.RunOnEventLoop(fmt.Sprintf("JSON.stringify(sse.%s(%q, %s))", fn, url, params))
	if err != nil {
		return jsResult{}, err
	}
	var res jsResult
	require.NoError(t, json.Unmarshal([]byte(v.String()), &res), v.String())
	return res, nil
}

func (e *testEnv) mustCall(t *testing.T, fn, url, params string) jsResult {
	t.Helper()
	res, err := e.call(t, fn, url, params)
	require.NoError(t, err)
	return res
}

// sseHandler writes count events interval apart. With buffered it behaves like
// a proxy that buffers the body: headers at once, every event at the end.
func sseHandler(count int, interval time.Duration, buffered bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		flusher := w.(http.Flusher) //nolint:forcetypeassert // the test server's ResponseWriter is one
		flusher.Flush()

		if buffered {
			time.Sleep(time.Duration(count) * interval)
		}
		for i := 1; i <= count; i++ {
			if !buffered && i > 1 {
				select {
				case <-time.After(interval):
				case <-r.Context().Done():
					return
				}
			}
			_, _ = fmt.Fprintf(w, ": comment %d\nevent: tick\nid: %d\ndata: {\"seq\":%d}\n\n", i, i, i)
			if !buffered {
				flusher.Flush()
			}
		}
	}
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestGetParsesEvents(t *testing.T) {
	t.Parallel()

	srv := newServer(t, sseHandler(3, 0, false))
	env := newTestEnv(t, srv.Client().Transport)

	res := env.mustCall(t, "get", srv.URL+"/sse", "")

	assert.Equal(t, 200, res.Status)
	assert.Equal(t, "HTTP/1.1", res.Proto)
	assert.Equal(t, "text/event-stream", res.Headers["Content-Type"])
	assert.Empty(t, res.Error)
	assert.Zero(t, res.ErrorCode)
	require.Len(t, res.Events, 3)
	for i, ev := range res.Events {
		seq := strconv.Itoa(i + 1)
		assert.Equal(t, "tick", ev.Event)
		assert.Equal(t, `{"seq":`+seq+`}`, ev.Data)
		assert.Equal(t, seq, ev.ID)
	}
	assert.Len(t, res.GapsMS, 2)
	require.NotNil(t, res.FirstByteMS)
	require.NotNil(t, res.FirstEventMS)
	assert.LessOrEqual(t, *res.FirstByteMS, *res.FirstEventMS)
	assert.LessOrEqual(t, *res.FirstEventMS, res.DurationMS)
	assert.Positive(t, res.Bytes)
	assert.Nil(t, res.ChunksMS, "get() reports events, not chunks")
}

// TestGetTiming is the reason for the module: a proxy that streams /sse shows
// the first event early; one that buffers sends the headers at once (so
// http_req_waiting looks fine) but the first event only at the end.
func TestGetTiming(t *testing.T) {
	t.Parallel()

	const (
		count    = 3
		interval = 200 * time.Millisecond
	)
	tests := []struct {
		name     string
		buffered bool
		check    func(t *testing.T, res jsResult)
	}{
		{
			name: "streamed",
			check: func(t *testing.T, res jsResult) {
				assert.Less(t, *res.FirstEventMS, 150.0, "the first event comes at once")
				assert.GreaterOrEqual(t, res.DurationMS, 390.0, "the stream lasts 2 intervals")
				for _, gap := range res.GapsMS {
					assert.InDelta(t, 200, gap, 100, "events arrive one interval apart")
				}
			},
		},
		{
			name:     "buffered",
			buffered: true,
			check: func(t *testing.T, res jsResult) {
				assert.Less(t, *res.FirstByteMS, 150.0, "headers come at once")
				assert.GreaterOrEqual(t, *res.FirstEventMS, 550.0, "the first event waits for the whole body")
				assert.InDelta(t, res.DurationMS, *res.FirstEventMS, 50, "first event ≈ total")
				for _, gap := range res.GapsMS {
					assert.Less(t, gap, 50.0, "all events arrive together")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			srv := newServer(t, sseHandler(count, interval, tc.buffered))
			env := newTestEnv(t, srv.Client().Transport)
			res := env.mustCall(t, "get", srv.URL+"/sse", "")

			require.Equal(t, 200, res.Status)
			require.Len(t, res.Events, count)
			require.NotNil(t, res.FirstByteMS)
			require.NotNil(t, res.FirstEventMS)
			for i, ev := range res.Events {
				if i > 0 {
					assert.InDelta(t, ev.AtMS-res.Events[i-1].AtMS, res.GapsMS[i-1], 0.001)
				}
			}
			tc.check(t, res)
		})
	}
}

func TestGetMaxEvents(t *testing.T) {
	t.Parallel()

	srv := newServer(t, sseHandler(10, 100*time.Millisecond, false))
	env := newTestEnv(t, srv.Client().Transport)

	res := env.mustCall(t, "get", srv.URL+"/sse", `{maxEvents: 2}`)

	assert.Equal(t, 200, res.Status)
	assert.Empty(t, res.Error, "stopping at maxEvents is not an error")
	assert.Len(t, res.Events, 2)
	assert.Less(t, res.DurationMS, 500.0, "reading stops at the 2nd event")
}

func TestStream(t *testing.T) {
	t.Parallel()

	const chunks = 3
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		for i := range chunks {
			if i > 0 {
				time.Sleep(150 * time.Millisecond)
			}
			_, _ = w.Write([]byte("0123456789"))
			w.(http.Flusher).Flush() //nolint:forcetypeassert // the test server's ResponseWriter is one
		}
	}))
	env := newTestEnv(t, srv.Client().Transport)

	res := env.mustCall(t, "stream", srv.URL+"/stream?chunks=3", "")

	assert.Equal(t, 200, res.Status)
	assert.Empty(t, res.Error)
	assert.Equal(t, int64(10*chunks), res.Bytes)
	require.Len(t, res.ChunksMS, chunks, "one read per flushed chunk")
	assert.Equal(t, []int64{10, 10, 10}, res.ChunksBytes, "bytes per read")
	require.NotNil(t, res.FirstChunkMS)
	assert.Equal(t, res.ChunksMS[0], *res.FirstChunkMS)
	assert.Less(t, *res.FirstChunkMS, 100.0)
	assert.InDelta(t, 150, res.ChunksMS[2]-res.ChunksMS[1], 75)
	assert.GreaterOrEqual(t, res.DurationMS, res.ChunksMS[2])
	assert.Nil(t, res.Events, "stream() reports chunks, not events")
}

// TestStreamChunkSizes: however the server's chunks reach the client (split across reads, or
// several in one), chunks_bytes says how many bytes each read brought, so that a script can tell
// when each chunk was whole: a chunk that arrives in two parts is not there before its second.
func TestStreamChunkSizes(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		flushes []string // what the server writes, flushed after each, 60 ms apart
		want    []int64
	}{
		{name: "one read per flush", flushes: []string{"aaaa", "bbbb"}, want: []int64{4, 4}},
		{name: "a chunk split in two", flushes: []string{"aa", "aabbbb"}, want: []int64{2, 6}},
		{name: "two chunks at once", flushes: []string{"aaaabbbb", "cccc"}, want: []int64{8, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusOK)
				for i, f := range tc.flushes {
					if i > 0 {
						time.Sleep(60 * time.Millisecond)
					}
					_, _ = w.Write([]byte(f))
					w.(http.Flusher).Flush() //nolint:forcetypeassert // the test server's ResponseWriter is one
				}
			}))
			env := newTestEnv(t, srv.Client().Transport)

			res := env.mustCall(t, "stream", srv.URL+"/stream", "")

			require.Equal(t, 200, res.Status, res.Error)
			assert.Equal(t, tc.want, res.ChunksBytes)
			require.Len(t, res.ChunksMS, len(tc.want), "chunks_ms and chunks_bytes are parallel")
			assert.Equal(t, res.Bytes, total(res.ChunksBytes))
		})
	}
}

// TestCompressedBodyDecoded: a body the server compressed (as a proxy may for a client that
// accepts it, as browsers do) is decoded as k6/http decodes its bodies, so events are parsed and
// bytes counted on what the origin sent, and its Content-Encoding stays in the result's headers
// for a script to see that it came compressed.
func TestCompressedBodyDecoded(t *testing.T) {
	t.Parallel()

	const plain = "event: tick\ndata: {\"seq\":0}\n\nevent: tick\ndata: {\"seq\":1}\n\n"
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		coding := r.URL.Query().Get("coding")
		if coding != "" {
			w.Header().Set("Content-Encoding", coding)
		}
		zw := compressor(t, coding, w)
		_, _ = zw.Write([]byte(plain))
		require.NoError(t, zw.Close())
	}))
	// as k6's own transport: no Accept-Encoding of its own, so nothing is decoded before the tap
	transport := srv.Client().Transport.(*http.Transport).Clone() //nolint:forcetypeassert // httptest's client has one
	transport.DisableCompression = true
	t.Cleanup(transport.CloseIdleConnections)

	for _, coding := range []string{"", "gzip", "deflate", "br", "zstd", "gzip, br"} {
		for _, fn := range []string{"get", "stream"} {
			t.Run(fn+"/"+coding, func(t *testing.T) {
				t.Parallel()

				env := newTestEnv(t, transport)
				u := srv.URL + "/sse?coding=" + url.QueryEscape(coding)
				res := env.mustCall(t, fn, u, `{headers: {"Accept-Encoding": "gzip, deflate, br, zstd"}}`)

				require.Equal(t, 200, res.Status, res.Error)
				assert.Equal(t, coding, res.Headers["Content-Encoding"])
				assert.Equal(t, int64(len(plain)), res.Bytes, "decoded bytes")
				if fn == "get" {
					require.Len(t, res.Events, 2)
					assert.Equal(t, `{"seq":1}`, res.Events[1].Data)
				} else {
					assert.Equal(t, res.Bytes, total(res.ChunksBytes))
				}
			})
		}
	}
}

// TestCompressedStreamTimed: a compressed stream flushed event by event is decoded as it comes,
// so each event is timed when it arrived, not when the body ended; one compressed and held back
// to the end shows as that.
func TestCompressedStreamTimed(t *testing.T) {
	t.Parallel()

	const interval = 150 * time.Millisecond
	tests := []struct {
		coding   string
		buffered bool
	}{
		{coding: "gzip"},
		{coding: "deflate"},
		{coding: "br"},
		{coding: "zstd"},
		{coding: "gzip", buffered: true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/buffered=%v", tc.coding, tc.buffered), func(t *testing.T) {
			t.Parallel()

			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Encoding", tc.coding)
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush() //nolint:forcetypeassert // the test server's ResponseWriter is one
				zw := compressor(t, tc.coding, w)
				for i := range 3 {
					if i > 0 {
						time.Sleep(interval)
					}
					_, _ = fmt.Fprintf(zw, "event: tick\ndata: %d\n\n", i)
					if !tc.buffered {
						require.NoError(t, zw.Flush())
						w.(http.Flusher).Flush() //nolint:forcetypeassert // the test server's ResponseWriter is one
					}
				}
				require.NoError(t, zw.Close())
			}))
			transport := srv.Client().Transport.(*http.Transport).Clone() //nolint:forcetypeassert // httptest's client has one
			transport.DisableCompression = true
			t.Cleanup(transport.CloseIdleConnections)
			env := newTestEnv(t, transport)

			res := env.mustCall(t, "get", srv.URL+"/sse", "")

			require.Equal(t, 200, res.Status, res.Error)
			require.Len(t, res.Events, 3)
			require.NotNil(t, res.FirstEventMS)
			if tc.buffered {
				assert.Greater(t, *res.FirstEventMS, 250.0, "held back: the first event comes with the last")
				return
			}
			assert.Less(t, *res.FirstEventMS, 100.0, "the first event is decoded as it comes")
			for _, gap := range res.GapsMS {
				assert.InDelta(t, 150, gap, 75, "events one interval apart")
			}
		})
	}
}

// compressor writes coding to w ("": as it is).
func compressor(t *testing.T, coding string, w io.Writer) interface {
	io.Writer
	Flush() error
	Close() error
} {
	t.Helper()
	codings := strings.Split(coding, ",")
	var zw interface {
		io.Writer
		Flush() error
		Close() error
	} = nopCompressor{w}
	// the first coding listed was applied first, so it is the innermost writer
	var stack []interface {
		io.Writer
		Flush() error
		Close() error
	}
	for i := len(codings) - 1; i >= 0; i-- {
		switch strings.TrimSpace(codings[i]) {
		case "gzip":
			zw = gzip.NewWriter(zw)
		case "deflate":
			zw = zlib.NewWriter(zw)
		case "br":
			zw = brotli.NewWriter(zw)
		case "zstd":
			enc, err := zstd.NewWriter(zw)
			require.NoError(t, err)
			zw = enc
		}
		stack = append(stack, zw)
	}
	return chain{stack: stack, top: zw}
}

// chain flushes and closes every writer of a stack of codings, innermost last.
type chain struct {
	stack []interface {
		io.Writer
		Flush() error
		Close() error
	}
	top io.Writer
}

func (c chain) Write(p []byte) (int, error) { return c.top.Write(p) }

func (c chain) Flush() error {
	for i := len(c.stack) - 1; i >= 0; i-- {
		if err := c.stack[i].Flush(); err != nil {
			return err
		}
	}
	return nil
}

func (c chain) Close() error {
	for i := len(c.stack) - 1; i >= 0; i-- {
		if err := c.stack[i].Close(); err != nil {
			return err
		}
	}
	return nil
}

type nopCompressor struct{ io.Writer }

func (nopCompressor) Flush() error { return nil }
func (nopCompressor) Close() error { return nil }

func TestErrors(t *testing.T) {
	t.Parallel()

	slow := newServer(t, sseHandler(5, 300*time.Millisecond, false))
	silent := newServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select { // never answers within the test's timeout
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	refused := closedPortURL(t)

	tests := []struct {
		name, fn, url, params string
		wantCode              int
		wantError             string
		check                 func(t *testing.T, res jsResult)
	}{
		{
			name: "timeout in the middle of the body", fn: "get", url: slow.URL, params: `{timeout: "450ms"}`,
			wantCode: 1050, wantError: "request timeout",
			check: func(t *testing.T, res jsResult) {
				assert.NotEmpty(t, res.Events, "events before the timeout are kept")
				assert.InDelta(t, 450, res.DurationMS, 150)
				// what tells a stall from no answer (scenarios/lib/probes.js failureOf)
				assert.NotNil(t, res.FirstByteMS, "the head came")
			},
		},
		{
			name: "timeout before the headers", fn: "get", url: silent.URL, params: `{timeout: 200}`,
			wantCode: 1050, wantError: "request timeout",
			check: func(t *testing.T, res jsResult) {
				assert.Nil(t, res.FirstByteMS)
				assert.Nil(t, res.FirstEventMS)
			},
		},
		{
			name: "stream timeout", fn: "stream", url: silent.URL, params: `{timeout: "200ms"}`,
			wantCode: 1050, wantError: "request timeout",
		},
		{
			name: "refused port", fn: "get", url: refused,
			wantCode: 1212, wantError: "connection refused",
		},
		{
			name: "invalid URL", fn: "get", url: "http://[::1", wantCode: 1020, wantError: "invalid URL",
		},
		{
			name: "unknown param", fn: "get", url: slow.URL, params: `{maxevents: 1}`,
			wantError: `sse.get() unknown param "maxevents"`,
		},
		{
			name: "maxEvents on stream", fn: "stream", url: slow.URL, params: `{maxEvents: 1}`,
			wantError: "sse.stream() doesn't accept maxEvents",
		},
		{
			name: "negative maxEvents", fn: "get", url: slow.URL, params: `{maxEvents: -1}`,
			wantError: "maxEvents must be a non-negative integer",
		},
		{
			name: "bad timeout", fn: "get", url: slow.URL, params: `{timeout: "soon"}`,
			wantError: "sse.get() invalid timeout value",
		},
		{
			name: "bad tag", fn: "get", url: slow.URL, params: `{tags: {route: {}}}`,
			wantError: "sse.get() invalid metric tags",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			env := newTestEnv(t, slow.Client().Transport)
			res := env.mustCall(t, tc.fn, tc.url, tc.params)

			assert.Equal(t, 0, res.Status)
			assert.Contains(t, res.Error, tc.wantError)
			assert.Equal(t, tc.wantCode, res.ErrorCode)
			if tc.check != nil {
				tc.check(t, res)
			}
		})
	}
}

func TestThrow(t *testing.T) {
	t.Parallel()

	refused := closedPortURL(t)
	tests := []struct {
		name, fn, url, params string
		wantError             string
	}{
		{"request error", "get", refused, `{throw: true}`, "connection refused"},
		{"stream request error", "stream", refused, `{throw: true}`, "connection refused"},
		{"param error", "get", refused, `{throw: true, nope: 1}`, `unknown param "nope"`},
		{"param error before throw", "get", refused, `{nope: 1, throw: true}`, `unknown param "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			env := newTestEnv(t, http.DefaultTransport)
			_, err := env.call(t, tc.fn, tc.url, tc.params)
			require.ErrorContains(t, err, tc.wantError)
		})
	}
}

func TestInitContext(t *testing.T) {
	t.Parallel()

	rt := modulestest.NewRuntime(t)
	mi := New().NewModuleInstance(rt.VU)
	require.NoError(t, rt.VU.Runtime().Set("sse", mi.Exports().Named))

	_, err := rt.RunOnEventLoop(`sse.get("http://127.0.0.1:1/")`)
	require.ErrorContains(t, err, "sse.get() can't be called in the init context")
}

// TestTLSUsesStateTransport proves the request goes through the VU's
// state.Transport: its dialer (standing in for k6's `hosts`, which lives in
// the dialer) sends example.com to the test server, and only its trusted CA
// makes the certificate verify.
func TestTLSUsesStateTransport(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name      string
		http2     bool
		trustCA   bool
		wantProto string
		wantCode  int
	}{
		{name: "h1 trusted", trustCA: true, wantProto: "HTTP/1.1"},
		{name: "h2 trusted", http2: true, trustCA: true, wantProto: "HTTP/2.0"},
		{name: "untrusted", wantCode: 1310},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			srv := httptest.NewUnstartedServer(sseHandler(2, 50*time.Millisecond, false))
			srv.EnableHTTP2 = tc.http2
			srv.StartTLS()
			t.Cleanup(srv.Close)

			transport := &http.Transport{ForceAttemptHTTP2: tc.http2, TLSClientConfig: &tls.Config{}}
			if tc.trustCA {
				transport = srv.Client().Transport.(*http.Transport).Clone() //nolint:forcetypeassert // httptest's client has one
			}
			addr := srv.Listener.Addr().String()
			transport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			}
			t.Cleanup(transport.CloseIdleConnections)

			env := newTestEnv(t, transport)
			_, port, _ := net.SplitHostPort(addr)
			res := env.mustCall(t, "get", "https://example.com:"+port+"/sse", "")

			if tc.wantCode != 0 {
				assert.Equal(t, 0, res.Status)
				assert.Equal(t, tc.wantCode, res.ErrorCode, res.Error)
				return
			}
			assert.Equal(t, 200, res.Status, res.Error)
			assert.Equal(t, tc.wantProto, res.Proto)
			assert.Len(t, res.Events, 2)
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	t.Parallel()

	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, h := range []string{"Accept", "User-Agent", "X-Probe"} {
			_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", h, r.Header.Get(h))
		}
		_, _ = fmt.Fprintf(w, "event: host\ndata: %s\n\n", r.Host)
	}))
	env := newTestEnv(t, srv.Client().Transport)

	res := env.mustCall(t, "get", srv.URL, `{headers: {"X-Probe": "1", "Host": "bench.test"}}`)

	got := map[string]string{}
	for _, ev := range res.Events {
		got[ev.Event] = ev.Data
	}
	assert.Equal(t, map[string]string{
		"Accept":     "text/event-stream",
		"User-Agent": "sse-test",
		"X-Probe":    "1",
		"host":       "bench.test",
	}, got)
}

func TestMetrics(t *testing.T) {
	t.Parallel()

	sse := newServer(t, sseHandler(3, 20*time.Millisecond, false))
	chunked := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("chunk"))
	}))

	tests := []struct {
		name, fn, url, params string
		wantTrends            map[string]int // metric → number of samples
		wantTrendTags         map[string]string
		wantHTTPTags          map[string]string
	}{
		{
			name: "get", fn: "get", url: sse.URL + "/sse?count=3&interval_ms=20",
			params:     `{tags: {route: "/sse", target: "direct"}}`,
			wantTrends: map[string]int{metricFirstEvent: 1, metricEventGap: 2},
			wantTrendTags: map[string]string{
				"group": "", "route": "/sse", "target": "direct", "status": "200", "proto": "HTTP/1.1",
			},
			wantHTTPTags: map[string]string{
				"group": "", "route": "/sse", "target": "direct", "status": "200", "proto": "HTTP/1.1",
				"method": "GET", "name": sse.URL + "/sse", "url": sse.URL + "/sse",
				"expected_response": "true",
			},
		},
		{
			name: "stream with a name tag", fn: "stream", url: chunked.URL + "/stream?chunks=1",
			params:     `{tags: {name: "stream"}}`,
			wantTrends: map[string]int{metricFirstChunk: 1},
			wantTrendTags: map[string]string{
				"group": "", "name": "stream", "status": "200", "proto": "HTTP/1.1",
			},
			wantHTTPTags: map[string]string{
				"group": "", "status": "200", "proto": "HTTP/1.1",
				"method": "GET", "name": "stream", "url": "stream",
				"expected_response": "true",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			env := newTestEnv(t, sse.Client().Transport)
			res := env.mustCall(t, tc.fn, tc.url, tc.params)
			require.Equal(t, 200, res.Status, res.Error)

			trends := map[string]int{}
			httpSeen := map[string]bool{}
			for _, c := range metrics.GetBufferedSamples(env.samples) {
				for _, s := range c.GetSamples() {
					tags := s.Tags.Map()
					switch s.Metric.Name {
					case metricFirstEvent, metricEventGap, metricFirstChunk:
						trends[s.Metric.Name]++
						assert.Equal(t, tc.wantTrendTags, tags, s.Metric.Name)
						assert.Positive(t, s.Value)
					default:
						httpSeen[s.Metric.Name] = true
						assert.Equal(t, tc.wantHTTPTags, tags, s.Metric.Name)
					}
				}
			}
			assert.Equal(t, tc.wantTrends, trends)
			for _, name := range []string{"http_reqs", "http_req_duration", "http_req_waiting", "http_req_failed"} {
				assert.True(t, httpSeen[name], "k6 emits %s", name)
			}
		})
	}
}

// closedPortURL is a loopback URL nothing listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/sse"
}

// total is the bytes of every chunk: what the body's size must be.
func total(chunks []int64) int64 {
	var sum int64
	for _, n := range chunks {
		sum += n
	}
	return sum
}
