package http3

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib"
	"gopkg.in/guregu/null.v3"

	"github.com/proxybench/proxybench/extensions/upstream"
)

func TestBatch(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name      string
		opts      stateOption
		js        string
		wantConns int64
		check     func(t *testing.T, e *testEnv, elapsed time.Duration)
	}{
		{
			name:      "array: concurrent streams on one connection",
			js:        `http3.batch(Array.from({length: 16}, () => "BASE/slow?d=300ms"))`,
			wantConns: 1,
			check: func(t *testing.T, e *testEnv, elapsed time.Duration) {
				var rs []jsResponse
				e.result(t, `globalThis.out`, &rs)
				require.Len(t, rs, 16)
				for _, r := range rs {
					assert.Equal(t, 200, r.Status, r.Error)
					assert.Equal(t, "HTTP/3.0", r.Proto)
				}
				// 16 × 300 ms in flight together, not one after another
				assert.Less(t, elapsed, 1500*time.Millisecond)
			},
		},
		{
			name: "object: responses by key, every request form",
			js: `http3.batch({
				plain: "BASE/",
				arr: ["POST", "BASE/upload", "abc", {tags: {route: "/upload"}}],
				obj: {method: "put", url: "BASE/upload", body: "abcd", params: {responseType: "text"}},
			})`,
			wantConns: 1,
			check: func(t *testing.T, e *testEnv, _ time.Duration) {
				var rs map[string]jsResponse
				e.result(t, `globalThis.out`, &rs)
				require.Len(t, rs, 3)
				assert.Len(t, *rs["plain"].Body, upstream.RootBodySize)
				assert.Equal(t, `{"bytes":3}`, *rs["arr"].Body)
				assert.Equal(t, `{"bytes":4}`, *rs["obj"].Body)
				assert.Equal(t, "PUT", rs["obj"].Request.Method)
			},
		},
		{
			name:      "noConnectionReuse: a connection per request",
			opts:      func(s *lib.State) { s.Options.NoConnectionReuse = null.BoolFrom(true) },
			js:        `http3.batch(Array.from({length: 6}, () => "BASE/"))`,
			wantConns: 6,
			check: func(t *testing.T, e *testEnv, _ time.Duration) {
				var rs []jsResponse
				e.result(t, `globalThis.out`, &rs)
				for _, r := range rs {
					assert.Equal(t, 200, r.Status, r.Error)
					assert.Greater(t, r.Timings.TLSHandshaking, 0.0)
				}
			},
		},
		{
			name: "batchPerHost caps the streams in flight",
			opts: func(s *lib.State) { s.Options.BatchPerHost = null.IntFrom(2) },
			js:   `http3.batch(Array.from({length: 4}, () => "BASE/slow?d=300ms"))`,
			check: func(t *testing.T, _ *testEnv, elapsed time.Duration) {
				assert.GreaterOrEqual(t, elapsed, 600*time.Millisecond, "2 rounds of 2")
			},
			wantConns: 1,
		},
		{
			name: "an invalid request: nothing is sent",
			js:   `http3.batch(["BASE/", "http://bench.test/"])`,
			// wantConns: 0
			check: func(t *testing.T, e *testEnv, _ time.Duration) {
				var rs []jsResponse
				e.result(t, `globalThis.out`, &rs)
				require.Len(t, rs, 2)
				assert.Equal(t, 0, rs[0].Status)
				assert.Equal(t, `not sent: http3.batch() request 1 needs an https:// URL (HTTP/3 runs over QUIC and TLS), `+
					`got "http://bench.test/"`, rs[0].Error)
				assert.Equal(t, `http3.batch() request 1 needs an https:// URL (HTTP/3 runs over QUIC and TLS), `+
					`got "http://bench.test/"`, rs[1].Error)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts []stateOption
			if tc.opts != nil {
				opts = append(opts, tc.opts)
			}
			e := newTestEnv(t, opts...)
			start := time.Now()
			_, err := e.run(`globalThis.out = ` + tc.js)
			elapsed := time.Since(start)
			require.NoError(t, err)
			assert.Equal(t, tc.wantConns, e.srv.Accepted())
			tc.check(t, e, elapsed)
		})
	}
}

func TestBatchErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, js, err string
		throw         bool
	}{
		{"no argument", `http3.batch()`, "http3.batch() accepts only an array or an object of requests", false},
		{"two arguments", `http3.batch([], [])`, "http3.batch() accepts only an array or an object of requests", false},
		{"a string", `http3.batch("BASE/")`, "http3.batch() accepts only an array or an object of requests", false},
		{
			"an array request too short", `http3.batch([["GET"]])`,
			"http3.batch() request 0: an array request needs at least [method, url]", true,
		},
		{"an object request without url", `http3.batch({a: {method: "GET"}})`, "http3.batch() request a has no url", true},
		{
			"a request error with params.throw", `http3.batch([["GET", "BASE/slow?d=2s", null, {timeout: "100ms", throw: true}]])`,
			"request timeout", false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, func(s *lib.State) { s.Options.Throw = null.BoolFrom(tc.throw) })
			_, err := e.run(tc.js)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}
