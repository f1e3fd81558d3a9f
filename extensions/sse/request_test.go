package sse

import (
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
	"gopkg.in/guregu/null.v3"
)

func testState() *lib.State {
	registry := metrics.NewRegistry()
	return &lib.State{
		Options: lib.Options{
			SystemTags:   &metrics.DefaultSystemTagSet,
			MaxRedirects: null.IntFrom(7),
			UserAgent:    null.StringFrom("ua"),
		},
		Tags: lib.NewVUStateTags(registry.RootTagSet().WithTagsFromMap(map[string]string{"vu_tag": "x"})),
	}
}

func TestParseRequest(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		fn     string
		mode   mode
		params string // a JS expression
		check  func(t *testing.T, req *request)
	}{
		{
			name: "defaults as k6/http", fn: "get", mode: modeEvents, params: "undefined",
			check: func(t *testing.T, req *request) {
				assert.Equal(t, defaultTimeout, req.preq.Timeout)
				assert.Equal(t, null.IntFrom(7), req.preq.Redirects)
				assert.False(t, req.preq.Throw)
				assert.Zero(t, req.maxEvents)
				assert.Equal(t, "GET", req.preq.Req.Method)
				assert.Equal(t, "ua", req.preq.Req.Header.Get("User-Agent"))
				assert.Equal(t, "text/event-stream", req.preq.Req.Header.Get("Accept"))
				assert.Equal(t, map[string]string{"vu_tag": "x"}, req.preq.TagsAndMeta.Tags.Map())
				assert.True(t, req.preq.ResponseCallback(399))
				assert.False(t, req.preq.ResponseCallback(404))
			},
		},
		{
			name: "stream sends no Accept", fn: "stream", mode: modeChunks, params: "{}",
			check: func(t *testing.T, req *request) {
				assert.Empty(t, req.preq.Req.Header.Get("Accept"))
			},
		},
		{
			name: "timeout in ms", fn: "get", mode: modeEvents, params: "{timeout: 1500}",
			check: func(t *testing.T, req *request) {
				assert.Equal(t, 1500*time.Millisecond, req.preq.Timeout)
			},
		},
		{
			name: "timeout as a duration string", fn: "get", mode: modeEvents, params: `{timeout: "10s"}`,
			check: func(t *testing.T, req *request) {
				assert.Equal(t, 10*time.Second, req.preq.Timeout)
			},
		},
		{
			name: "headers, tags, maxEvents, throw", fn: "get", mode: modeEvents,
			params: `{headers: {Accept: "*/*", "X-A": 1}, tags: {route: "/sse"}, maxEvents: 3, throw: true}`,
			check: func(t *testing.T, req *request) {
				assert.Equal(t, "*/*", req.preq.Req.Header.Get("Accept"))
				assert.Equal(t, "1", req.preq.Req.Header.Get("X-A"))
				assert.Equal(t, map[string]string{"vu_tag": "x", "route": "/sse"}, req.preq.TagsAndMeta.Tags.Map())
				assert.Equal(t, 3, req.maxEvents)
				assert.True(t, req.preq.Throw)
				assert.Nil(t, req.expect)
			},
		},
		{
			name: "expect on stream", fn: "stream", mode: modeChunks, params: `{expect: "0123"}`,
			check: func(t *testing.T, req *request) {
				require.NotNil(t, req.expect)
				assert.Equal(t, "0123", *req.expect)
			},
		},
		{
			name: "an empty expect is a body of 0 bytes", fn: "stream", mode: modeChunks, params: `{expect: ""}`,
			check: func(t *testing.T, req *request) {
				require.NotNil(t, req.expect)
				assert.Empty(t, *req.expect)
			},
		},
		{
			name: "expect null or undefined: none", fn: "stream", mode: modeChunks, params: `{expect: null}`,
			check: func(t *testing.T, req *request) {
				assert.Nil(t, req.expect)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := sobek.New()
			params, err := rt.RunString("(" + tc.params + ")")
			require.NoError(t, err)

			req, err := parseRequest(rt, testState(), tc.fn, tc.mode, rt.ToValue("http://127.0.0.1/sse?count=3"), params)
			require.NoError(t, err)
			tc.check(t, req)
		})
	}
}

func TestParseRequestErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, fn, params, wantErr string
		mode                      mode
	}{
		{"unknown param", "get", `{maxevents: 1}`, `sse.get() unknown param "maxevents"`, modeEvents},
		{"maxEvents on stream", "stream", `{maxEvents: 1}`, "sse.stream() doesn't accept maxEvents", modeChunks},
		{"fractional maxEvents", "get", `{maxEvents: 1.5}`, "maxEvents must be a non-negative integer, got 1.5", modeEvents},
		{"zero timeout", "get", `{timeout: 0}`, "sse.get() timeout must be positive", modeEvents},
		{"bad timeout", "stream", `{timeout: "later"}`, "sse.stream() invalid timeout value", modeChunks},
		{"bad tag", "get", `{tags: {a: [1]}}`, "sse.get() invalid metric tags", modeEvents},
		{"expect on get", "get", `{expect: "x"}`, "sse.get() doesn't accept expect, only sse.stream() does", modeEvents},
		{"expect a number", "stream", `{expect: 16384}`, "sse.stream() expect must be a string (the whole body expected), got 16384", modeChunks},
		{"expect an ArrayBuffer", "stream", `{expect: new ArrayBuffer(2)}`, "sse.stream() expect must be a string", modeChunks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := sobek.New()
			params, err := rt.RunString("(" + tc.params + ")")
			require.NoError(t, err)

			_, err = parseRequest(rt, testState(), tc.fn, tc.mode, rt.ToValue("http://127.0.0.1/"), params)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestSetDefaultName(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, url, params, want string
	}{
		{"query and fragment dropped", "http://127.0.0.1:9000/sse?count=3#x", "{}", "http://127.0.0.1:9000/sse"},
		{"credentials masked", "http://u:p@127.0.0.1/sse?a=1", "{}", "http://****:****@127.0.0.1/sse"},
		{"user name wins", "http://127.0.0.1/sse?count=3", `{tags: {name: "sse"}}`, "sse"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := sobek.New()
			params, err := rt.RunString("(" + tc.params + ")")
			require.NoError(t, err)
			state := testState()
			req, err := parseRequest(rt, state, "get", modeEvents, rt.ToValue(tc.url), params)
			require.NoError(t, err)

			setDefaultName(req.preq, state.Options.SystemTags)
			name, _ := req.preq.TagsAndMeta.Tags.Get("name")
			assert.Equal(t, tc.want, name)
		})
	}
}
