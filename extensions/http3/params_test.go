package http3

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext/httpext"
	"gopkg.in/guregu/null.v3"
)

func TestParseRequest(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		method string
		body   string // a JS expression, or ""
		params string // a JS expression, or ""
		opts   stateOption
		check  func(t *testing.T, p *httpext.ParsedHTTPRequest)
	}{
		{
			name: "k6/http's defaults",
			check: func(t *testing.T, p *httpext.ParsedHTTPRequest) {
				assert.Equal(t, 60*time.Second, p.Timeout)
				assert.Equal(t, httpext.ResponseTypeText, p.ResponseType)
				assert.False(t, p.Throw)
				assert.Equal(t, null.IntFrom(10), p.Redirects)
				assert.Equal(t, "http3-test", p.Req.Header.Get("User-Agent"))
				assert.Nil(t, p.Body)
				assert.True(t, p.ResponseCallback(200))
				assert.False(t, p.ResponseCallback(500))
			},
		},
		{
			name: "options: throw, discardResponseBodies, maxRedirects",
			opts: func(s *lib.State) {
				s.Options.Throw = null.BoolFrom(true)
				s.Options.DiscardResponseBodies = null.BoolFrom(true)
				s.Options.MaxRedirects = null.IntFrom(0)
			},
			check: func(t *testing.T, p *httpext.ParsedHTTPRequest) {
				assert.True(t, p.Throw)
				assert.Equal(t, httpext.ResponseTypeNone, p.ResponseType)
				assert.Equal(t, null.IntFrom(0), p.Redirects)
			},
		},
		{
			name:   "every param",
			method: http.MethodPost,
			body:   `"payload"`,
			params: `{headers: {Host: "vhost", "X-A": "1"}, tags: {route: "/x"}, timeout: "2s",
				responseType: "binary", throw: true, redirects: 3}`,
			check: func(t *testing.T, p *httpext.ParsedHTTPRequest) {
				assert.Equal(t, "vhost", p.Req.Host)
				assert.Equal(t, "1", p.Req.Header.Get("X-A"))
				v, ok := p.TagsAndMeta.Tags.Get("route")
				assert.True(t, ok)
				assert.Equal(t, "/x", v)
				assert.Equal(t, 2*time.Second, p.Timeout)
				assert.Equal(t, httpext.ResponseTypeBinary, p.ResponseType)
				assert.True(t, p.Throw)
				assert.Equal(t, null.IntFrom(3), p.Redirects)
				assert.Equal(t, "payload", p.Body.String())
			},
		},
		{
			name:   "timeout in milliseconds",
			params: `{timeout: 1500}`,
			check: func(t *testing.T, p *httpext.ParsedHTTPRequest) {
				assert.Equal(t, 1500*time.Millisecond, p.Timeout)
			},
		},
		{
			name:   "null params and null values",
			params: `{headers: null}`,
			check:  func(t *testing.T, p *httpext.ParsedHTTPRequest) { assert.Equal(t, 60*time.Second, p.Timeout) },
		},
		{
			name:   "an object body is a form",
			method: http.MethodPost,
			body:   `{a: "1", b: ["2", "3"]}`,
			check: func(t *testing.T, p *httpext.ParsedHTTPRequest) {
				assert.Equal(t, "a=1&b=2&b=3", p.Body.String())
				assert.Equal(t, "application/x-www-form-urlencoded", p.Req.Header.Get("Content-Type"))
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
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			body, params := jsValue(t, e, tc.body), jsValue(t, e, tc.params)
			var bodyArg any
			if !sobek.IsUndefined(body) {
				bodyArg = body.Export()
			}
			p, err := parseRequest(e.rt.VU.Runtime(), e.state, "http3.test()", method,
				e.rt.VU.Runtime().ToValue(e.base+"/"), bodyArg, params)
			require.NoError(t, err)
			assert.Equal(t, method, p.Req.Method)
			tc.check(t, p)
		})
	}
}

func TestParseRequestErrors(t *testing.T) {
	t.Parallel()

	tests := []struct{ name, url, body, params, err string }{
		{
			"http URL", "http://bench.test/", "", "",
			`http3.test() needs an https:// URL (HTTP/3 runs over QUIC and TLS), got "http://bench.test/"`,
		},
		{"bad URL", "https://[::1", "", "", "http3.test(): "},
		{
			"unknown param", "https://bench.test/", "", `{auth: "digest"}`,
			"http3.test() does not support params.auth (supported: headers, redirects, responseType, tags, throw, timeout)",
		},
		{"bad timeout", "https://bench.test/", "", `{timeout: "soon"}`, "http3.test(): invalid params.timeout"},
		{"negative timeout", "https://bench.test/", "", `{timeout: -1}`, "http3.test(): params.timeout must be positive"},
		{
			"bad responseType", "https://bench.test/", "", `{responseType: "json"}`,
			`http3.test(): invalid params.responseType "json" (use "text", "binary" or "none")`,
		},
		{"bad tags", "https://bench.test/", "", `{tags: {a: {b: 1}}}`, "http3.test(): invalid params.tags"},
		{
			"bad body", "https://bench.test/", "42", "",
			"http3.test(): unsupported request body type int64 (use a string, an ArrayBuffer or an object)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			body := jsValue(t, e, tc.body)
			var bodyArg any
			if !sobek.IsUndefined(body) {
				bodyArg = body.Export()
			}
			_, err := parseRequest(e.rt.VU.Runtime(), e.state, "http3.test()", http.MethodPost,
				e.rt.VU.Runtime().ToValue(tc.url), bodyArg, jsValue(t, e, tc.params))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestRequestBody(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		body any
		want string
	}{
		{"none", nil, ""},
		{"string", "abc", "abc"},
		{"bytes", []byte("xyz"), "xyz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := requestBody(tc.body, http.Header{})
			require.NoError(t, err)
			if b == nil {
				assert.Empty(t, tc.want)
				return
			}
			got, _ := io.ReadAll(b)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

// jsValue evaluates a JS expression ("" is undefined).
func jsValue(t *testing.T, e *testEnv, js string) sobek.Value {
	t.Helper()
	if js == "" {
		return sobek.Undefined()
	}
	v, err := e.rt.VU.Runtime().RunString("(" + js + ")")
	require.NoError(t, err)
	return v
}
