package sse

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxybench/proxybench/extensions/upstream"
)

func TestBodyCheck(t *testing.T) {
	t.Parallel()

	want := string(upstream.Pattern(100))
	flip := func(s string, at ...int) string {
		b := []byte(s)
		for _, i := range at {
			b[i] ^= 0x20
		}
		return string(b)
	}
	tests := []struct {
		name, body string
		want       int64
	}{
		{"the same", want, -1},
		{"first byte", flip(want, 0), 0},
		{"last byte", flip(want, 99), 99},
		{"the first of two", flip(want, 42, 70), 42},
		{"shorter, the same so far: its size tells", want[:60], -1},
		{"longer, the same as far as want goes: its size tells", want + "xyz", -1},
		{"shorter and different", flip(want, 7)[:60], 7},
		{"empty", "", -1},
	}
	// every body is fed whole, byte by byte and in 7-byte reads: where the reads split it
	// changes nothing
	for _, tc := range tests {
		for _, size := range []int{0, 1, 7} {
			t.Run(tc.name+"/"+strconv.Itoa(size), func(t *testing.T) {
				t.Parallel()
				c := newBodyCheck(want)
				body := tc.body
				for len(body) > 0 {
					n := len(body)
					if size > 0 {
						n = min(size, n)
					}
					c.feed([]byte(body[:n]))
					body = body[n:]
				}
				assert.Equal(t, tc.want, c.differsAt)
				assert.Equal(t, int64(len(tc.body)), c.n)
			})
		}
	}

	t.Run("an empty expect compares nothing", func(t *testing.T) {
		t.Parallel()
		c := newBodyCheck("")
		c.feed([]byte("anything"))
		assert.Equal(t, int64(-1), c.differsAt)
	})
}

// patternHandler serves the upstream's /stream?chunks=N&chunk_bytes=B: N chunks of the pattern,
// each flushed, 10 ms apart. flip=K (K ≥ 0) changes the byte at offset K of the 2nd chunk, as a
// proxy that rewrites a byte and keeps the length would; write=W writes (and flushes) each chunk
// W bytes at a time; coding=C compresses the body with C.
func patternHandler(t *testing.T) http.HandlerFunc {
	t.Helper()
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		num := func(k string, def int) int {
			if v := q.Get(k); v != "" {
				n, err := strconv.Atoi(v)
				require.NoError(t, err)
				return n
			}
			return def
		}
		chunks, chunkBytes, flip, write := num("chunks", 4), num("chunk_bytes", 4096), num("flip", -1), num("write", 0)
		if coding := q.Get("coding"); coding != "" {
			w.Header().Set("Content-Encoding", coding)
		}
		w.WriteHeader(http.StatusOK)
		zw := compressor(t, q.Get("coding"), w)
		flusher := w.(http.Flusher) //nolint:forcetypeassert // the test server's ResponseWriter is one
		for i := range chunks {
			if i > 0 {
				time.Sleep(10 * time.Millisecond)
			}
			chunk := upstream.Pattern(chunkBytes)
			if i == 1 && flip >= 0 {
				chunk[flip] ^= 0x20 // a letter's case, a digit's neighbour: one byte, same length
			}
			if write <= 0 {
				write = len(chunk)
			}
			for len(chunk) > 0 {
				n := min(write, len(chunk))
				_, _ = zw.Write(chunk[:n])
				_ = zw.Flush()
				flusher.Flush()
				chunk = chunk[n:]
			}
		}
		_ = zw.Close()
	}
}

// TestStreamExpect: with expect, sse.stream() holds every byte it reads to the expected byte at
// its offset and says where the first that differs is (body_differs_at, -1 for none); a body of
// another size is left to its size. Without expect the result is as it always was.
func TestStreamExpect(t *testing.T) {
	t.Parallel()

	mux := http.NewServeMux()
	mux.Handle("/stream", patternHandler(t))
	mux.Handle("/redirect", http.RedirectHandler("/stream", http.StatusFound)) // a body of its own
	srv := newServer(t, mux)
	// as k6's own transport: no Accept-Encoding of its own, so nothing is decoded before the tap
	transport := srv.Client().Transport.(*http.Transport).Clone() //nolint:forcetypeassert // httptest's client has one
	transport.DisableCompression = true
	t.Cleanup(transport.CloseIdleConnections)

	const whole = 4 * 4096
	tests := []struct {
		name, path, params string
		expect             string // default: 4 chunks of 4096 bytes
		wantBytes          int64
		want               *int64 // nil: no body_differs_at in the result
	}{
		{name: "the pattern", path: "/stream", wantBytes: whole, want: ptr(-1)},
		{name: "a byte flipped", path: "/stream?flip=6", wantBytes: whole, want: ptr(4096 + 6)},
		{name: "a byte flipped, 1000-byte writes", path: "/stream?flip=6&write=1000", wantBytes: whole, want: ptr(4096 + 6)},
		{name: "a byte flipped, byte by byte", path: "/stream?chunks=2&chunk_bytes=16&flip=6&write=1", expect: strings.Repeat(string(upstream.Pattern(16)), 2), wantBytes: 32, want: ptr(16 + 6)},
		{name: "the last byte flipped", path: "/stream?flip=4095", wantBytes: whole, want: ptr(4096 + 4095)},
		{name: "a byte flipped, gzip: the decoded offset", path: "/stream?flip=6&coding=gzip", wantBytes: whole, want: ptr(4096 + 6)},
		{name: "a byte flipped, gzip, br", path: "/stream?flip=6&coding=" + url.QueryEscape("gzip, br"), wantBytes: whole, want: ptr(4096 + 6)},
		{name: "shorter: a size mismatch", path: "/stream?chunks=3", wantBytes: 3 * 4096, want: ptr(-1)},
		{name: "longer: a size mismatch", path: "/stream?chunks=5", wantBytes: 5 * 4096, want: ptr(-1)},
		{name: "shorter and flipped", path: "/stream?chunks=2&flip=6", wantBytes: 2 * 4096, want: ptr(4096 + 6)},
		{name: "after a redirect: the last response's body", path: "/redirect", wantBytes: whole, want: ptr(-1)},
		{name: "no expect", path: "/stream?flip=6", params: `{}`, wantBytes: whole},
		{name: "expect null", path: "/stream?flip=6", params: `{expect: null}`, wantBytes: whole},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			env := newTestEnv(t, transport)
			expect := tc.expect
			if expect == "" {
				expect = strings.Repeat(string(upstream.Pattern(4096)), 4)
			}
			require.NoError(t, env.rt.VU.Runtime().Set("EXPECT", expect))
			params := tc.params
			if params == "" {
				params = `{expect: EXPECT, headers: {"Accept-Encoding": "gzip, br"}}`
			}
			res := env.mustCall(t, "stream", srv.URL+tc.path, params)

			require.Equal(t, 200, res.Status, res.Error)
			assert.Equal(t, tc.wantBytes, res.Bytes)
			assert.Equal(t, res.Bytes, total(res.ChunksBytes))
			if tc.want == nil {
				assert.Nil(t, res.BodyDiffersAt)
				return
			}
			require.NotNil(t, res.BodyDiffersAt, "body_differs_at")
			assert.Equal(t, *tc.want, *res.BodyDiffersAt)
		})
	}

	t.Run("without expect the result has no body_differs_at", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t, transport)
		v, err := env.rt.RunOnEventLoop(`Object.keys(sse.stream(` + strconv.Quote(srv.URL+"/stream?flip=6") + `)).join()`)
		require.NoError(t, err)
		assert.Equal(t, "status,proto,headers,bytes,first_byte_ms,chunks_ms,chunks_bytes,first_chunk_ms,duration_ms,error,error_code", v.String())
	})

	t.Run("a failed request keeps what it compared", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t, transport)
		res := env.mustCall(t, "stream", closedPortURL(t), `{expect: "abc"}`)
		assert.Equal(t, 1212, res.ErrorCode)
		require.NotNil(t, res.BodyDiffersAt)
		assert.Equal(t, int64(-1), *res.BodyDiffersAt, "nothing read, nothing differs: bytes 0 says the rest")
	})
}

func ptr(n int64) *int64 { return &n }
