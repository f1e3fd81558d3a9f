package sse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext/httpext"
	"go.k6.io/k6/v2/lib/types"
	"go.k6.io/k6/v2/metrics"
)

// defaultTimeout is k6/http's default request timeout.
const defaultTimeout = 60 * time.Second

// request is one parsed sse.get()/sse.stream() call.
type request struct {
	fn        string // "get" or "stream", for error messages
	mode      mode
	maxEvents int
	expect    *string // stream only: the whole body expected, compared as it is read; nil: none
	http3     bool    // over HTTP/3, on the VU's k6/x/proxybench/http3 connections
	preq      *httpext.ParsedHTTPRequest
}

// get is sse.get(url, [params]).
func (mi *ModuleInstance) get(url sobek.Value, params sobek.Value) (sobek.Value, error) {
	return mi.call("get", modeEvents, url, params)
}

// stream is sse.stream(url, [params]).
func (mi *ModuleInstance) stream(url sobek.Value, params sobek.Value) (sobek.Value, error) {
	return mi.call("stream", modeChunks, url, params)
}

// call runs one request synchronously, blocking the VU like k6/http does.
// Failures give a result with status 0 and error set, unless throw is on
// (the throw param, or k6's global throw option).
func (mi *ModuleInstance) call(fn string, m mode, url, params sobek.Value) (sobek.Value, error) {
	state := mi.vu.State()
	if state == nil {
		return nil, fmt.Errorf("sse.%s() can't be called in the init context", fn)
	}
	rt := mi.vu.Runtime()

	req, err := parseRequest(rt, state, fn, m, url, params)
	if err != nil {
		if req.preq.Throw {
			return nil, err
		}
		state.Logger.WithField("error", err).Warn("Request Failed")
		res := &Result{mode: m, Headers: map[string]string{}, Error: err.Error()}
		var k6e httpext.K6Error
		if errors.As(err, &k6e) {
			res.ErrorCode = int(k6e.Code)
		}
		return res.toJS(rt), nil
	}

	res, err := mi.do(mi.vu.Context(), state, req)
	if err != nil {
		return nil, err
	}
	return res.toJS(rt), nil
}

// do sends the request through k6's own httpext.MakeRequest, so k6 emits the
// standard http_* samples with its usual tags, classifies errors into its
// error codes and applies rps, redirects, cookies and http-debug as for
// k6/http. The only change is the transport: a copy of the VU state whose
// Transport wraps the VU's state.Transport to timestamp the body as it is read.
//
// With the http3 param the tapped transport is the VU's k6/x/proxybench/http3 one instead: the same QUIC
// connections, reuse options, resolver and timings as http3.get(), so the response is
// proto HTTP/3.0 and everything else (samples, tags, errors) is as over h1 and h2.
func (mi *ModuleInstance) do(ctx context.Context, state *lib.State, req *request) (*Result, error) {
	rec := newRecorder(req.mode, req.maxEvents)
	rec.expect = req.expect
	next := state.Transport
	if req.http3 {
		next = mi.h3.RoundTripper(ctx, state)
	}
	tapped := *state
	tapped.Transport = &tapTransport{next: next, rec: rec}

	tags := req.preq.TagsAndMeta.Clone() // the trends get the VU's tags and params.tags only
	setDefaultName(req.preq, state.Options.SystemTags)
	resp, err := httpext.MakeRequest(ctx, &tapped, req.preq)

	res := newResult(req.mode, rec, resp)
	if samples := mi.metrics.samples(res, rec.start, tags, state.Options.SystemTags); len(samples) > 0 {
		metrics.PushIfNotDone(ctx, state.Samples, samples)
	}
	if err != nil {
		return nil, err // only with throw: MakeRequest already reported it
	}
	return res, nil
}

// parseRequest builds the request as k6/http's parseRequest does for a GET,
// from the VU's tags and options. It always returns a request whose preq.Throw
// tells the caller whether a parse error must be thrown.
func parseRequest(
	rt *sobek.Runtime, state *lib.State, fn string, m mode, urlV, paramsV sobek.Value,
) (*request, error) {
	req := &request{
		fn:   fn,
		mode: m,
		preq: &httpext.ParsedHTTPRequest{
			Timeout:          defaultTimeout,
			Throw:            state.Options.Throw.Bool,
			Redirects:        state.Options.MaxRedirects,
			ResponseType:     httpext.ResponseTypeNone, // the tap reads the body; k6 discards it
			ResponseCallback: expectedStatus,
			Cookies:          make(map[string]*httpext.HTTPRequestCookie),
			TagsAndMeta:      state.Tags.GetCurrentValues(),
		},
	}
	var obj *sobek.Object
	if !common.IsNullish(paramsV) {
		obj = paramsV.ToObject(rt)
		// throw first, so that it also governs the errors of the other params
		if v := obj.Get("throw"); !common.IsNullish(v) {
			req.preq.Throw = v.ToBoolean()
		}
	}

	var rawURL any
	if urlV != nil {
		rawURL = urlV.Export()
	}
	u, err := httpext.ToURL(rawURL)
	if err != nil {
		return req, err
	}
	req.preq.URL = &u
	req.preq.Req = &http.Request{Method: http.MethodGet, URL: u.GetURL(), Header: make(http.Header)}
	req.preq.Req.Header.Set("User-Agent", state.Options.UserAgent.String)
	if m == modeEvents {
		req.preq.Req.Header.Set("Accept", "text/event-stream")
	}
	if state.CookieJar != nil {
		req.preq.ActiveJar = state.CookieJar
	}

	if obj != nil {
		if err := req.applyParams(rt, obj); err != nil {
			return req, err
		}
	}
	if req.http3 && u.GetURL().Scheme != "https" {
		return req, fmt.Errorf("sse.%s() http3: true needs an https:// URL (QUIC is TLS), got %q", fn, u.Clean())
	}

	if req.preq.ActiveJar != nil {
		httpext.SetRequestCookies(req.preq.Req, req.preq.ActiveJar, req.preq.Cookies)
	}
	return req, nil
}

func (req *request) applyParams(rt *sobek.Runtime, obj *sobek.Object) error {
	for _, k := range obj.Keys() {
		v := obj.Get(k)
		switch k {
		case "throw":
			// handled first by parseRequest
		case "headers":
			if common.IsNullish(v) {
				continue
			}
			headers := v.ToObject(rt)
			for _, name := range headers.Keys() {
				value := headers.Get(name).String()
				if strings.EqualFold(name, "host") {
					req.preq.Req.Host = value
				}
				req.preq.Req.Header.Set(name, value)
			}
		case "tags":
			if err := common.ApplyCustomUserTags(rt, &req.preq.TagsAndMeta, v); err != nil {
				return fmt.Errorf("sse.%s() invalid metric tags: %w", req.fn, err)
			}
		case "timeout":
			t, err := types.GetDurationValue(v.Export())
			if err != nil {
				return fmt.Errorf("sse.%s() invalid timeout value: %w", req.fn, err)
			}
			if t <= 0 {
				return fmt.Errorf("sse.%s() timeout must be positive, got %s", req.fn, t)
			}
			req.preq.Timeout = t
		case "http3":
			if common.IsNullish(v) {
				continue
			}
			b, ok := v.Export().(bool)
			if !ok {
				return fmt.Errorf("sse.%s() http3 must be true or false, got %s", req.fn, v.String())
			}
			req.http3 = b
		case "maxEvents":
			if req.mode != modeEvents {
				return fmt.Errorf("sse.%s() doesn't accept maxEvents, only sse.get() does", req.fn)
			}
			n, err := parseMaxEvents(v)
			if err != nil {
				return fmt.Errorf("sse.%s() %w", req.fn, err)
			}
			req.maxEvents = n
		case "expect":
			if req.mode != modeChunks {
				return fmt.Errorf("sse.%s() doesn't accept expect, only sse.stream() does", req.fn)
			}
			if common.IsNullish(v) {
				continue
			}
			s, ok := v.Export().(string)
			if !ok {
				return fmt.Errorf("sse.%s() expect must be a string (the whole body expected), got %s", req.fn, v.String())
			}
			req.expect = &s
		default:
			return fmt.Errorf("sse.%s() unknown param %q", req.fn, k)
		}
	}
	return nil
}

// setDefaultName tags the http_* samples with the URL without its query and
// fragment when the script set no name tag, so that probes with per-request
// query strings (/sse?count=3&interval_ms=200) don't make one time series per
// URL; k6 then uses the name for the url tag too. (k6/http would tag the full
// URL.) A URL built with the http.url template keeps k6's own naming.
func setDefaultName(preq *httpext.ParsedHTTPRequest, systemTags *metrics.SystemTagSet) {
	if _, ok := preq.TagsAndMeta.Tags.Get(metrics.TagName.String()); ok {
		return
	}
	if preq.URL.Name != "" && preq.URL.Name != preq.URL.Clean() {
		return
	}
	u := *preq.URL.GetURL()
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	name, err := httpext.NewURL(u.String(), "")
	if err != nil {
		return
	}
	preq.TagsAndMeta.SetSystemTagOrMetaIfEnabled(systemTags, metrics.TagName, name.Clean())
}

func parseMaxEvents(v sobek.Value) (int, error) {
	if common.IsNullish(v) {
		return 0, nil
	}
	f := v.ToFloat()
	if math.IsNaN(f) || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, fmt.Errorf("maxEvents must be a non-negative integer, got %s", v.String())
	}
	return int(f), nil
}

// expectedStatus is k6/http's default response callback (200–399 are
// expected), which decides http_req_failed and the expected_response tag.
// k6/http's own callbacks (http.expectedStatuses) are unexported types, so
// they can't be accepted here.
func expectedStatus(status int) bool {
	return status >= 200 && status <= 399
}
