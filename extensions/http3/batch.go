package http3

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/lib/netext/httpext"
)

var errBatchArgs = errors.New("http3.batch() accepts only an array or an object of requests")

// batch is http3.batch(requests): requests made concurrently, by
// httpext.MakeBatchRequests as k6/http does, so the batch and batchPerHost
// options cap the concurrency (k6's defaults: 20 and 6; set batchPerHost to 0
// or to at least the batch size to get every request in flight at once).
// Concurrent requests to one authority are streams on one QUIC connection
// (one per request with noConnectionReuse).
//
// requests is an array, giving an array of responses, or an object, giving an
// object of responses with the same keys. Each request is a URL, an array
// [method, url, body, params] or an object {method, url, body, params}.
func (mi *ModuleInstance) batch(args ...sobek.Value) (any, error) {
	state := mi.vu.State()
	if state == nil {
		return nil, errInitContext
	}
	if len(args) != 1 {
		return nil, errBatchArgs
	}

	var (
		reqs    []httpext.BatchParsedHTTPRequest
		results any // []*Response or map[string]*Response
		err     error
	)
	var all []*Response
	add := func(req httpext.BatchParsedHTTPRequest, resp *Response, e error) *Response {
		all = append(all, resp)
		if e != nil && err == nil {
			err = e
		}
		if e == nil {
			reqs = append(reqs, req)
		}
		return resp
	}
	switch v := args[0].Export().(type) {
	case []any:
		list := make([]*Response, len(v))
		for i, r := range v {
			list[i] = add(mi.batchRequest(strconv.Itoa(i), r))
		}
		results = list
	case map[string]any:
		set := make(map[string]*Response, len(v))
		for key, r := range v {
			set[key] = add(mi.batchRequest(key, r))
		}
		results = set
	default:
		return nil, errBatchArgs
	}
	if err != nil {
		// as k6/http: nothing is sent when a request of the batch is invalid
		if state.Options.Throw.Bool {
			return nil, err
		}
		for _, resp := range all {
			if resp.Error == "" {
				resp.Error = "not sent: " + err.Error()
			}
		}
		state.Logger.WithField("error", err).Warn("A batch request failed")
		return results, nil
	}

	n := len(reqs)
	globalLimit := int(state.Options.Batch.Int64)
	if globalLimit <= 0 {
		globalLimit = n
	}
	ctx := mi.vu.Context()
	errs := httpext.MakeBatchRequests(ctx, mi.requestState(ctx, state), reqs, n,
		globalLimit, int(state.Options.BatchPerHost.Int64))
	for range n {
		if e := <-errs; e != nil && err == nil { // the first error, thrown with throw: true
			err = e
		}
	}
	for _, req := range reqs {
		if req.ResponseType == httpext.ResponseTypeBinary {
			if b, ok := req.Response.Body.([]byte); ok {
				req.Response.Body = mi.vu.Runtime().NewArrayBuffer(b)
			}
		}
	}
	return results, err
}

// batchRequest parses one request of a batch. Its response is returned even
// when parsing fails, holding the error.
func (mi *ModuleInstance) batchRequest(key string, val any) (httpext.BatchParsedHTTPRequest, *Response, error) {
	resp := &Response{Response: httpext.NewResponse(), rt: mi.vu.Runtime()}
	resp.Body = nil // until a response fills it
	call := "http3.batch() request " + key

	method := http.MethodGet
	var (
		rawURL, body any
		params       sobek.Value
	)
	switch data := val.(type) {
	case []any: // [method, url, body, params]
		if len(data) < 2 {
			return mkFailed(resp, fmt.Errorf("%s: an array request needs at least [method, url]", call))
		}
		m, ok := data[0].(string)
		if !ok {
			return mkFailed(resp, fmt.Errorf("%s: the method must be a string, got %T", call, data[0]))
		}
		method, rawURL = m, data[1]
		if len(data) > 2 {
			body = data[2]
		}
		if len(data) > 3 && data[3] != nil {
			params = mi.vu.Runtime().ToValue(data[3])
		}
	case map[string]any: // {method, url, body, params}
		u, ok := data["url"]
		if !ok {
			return mkFailed(resp, fmt.Errorf("%s has no url", call))
		}
		rawURL, body = u, data["body"]
		if m, ok := data["method"]; ok {
			s, ok := m.(string)
			if !ok {
				return mkFailed(resp, fmt.Errorf("%s: the method must be a string, got %T", call, m))
			}
			method = strings.ToUpper(s)
		}
		if p, ok := data["params"]; ok && p != nil {
			params = mi.vu.Runtime().ToValue(p)
		}
	default: // a URL
		rawURL = val
	}
	if method == http.MethodGet || method == http.MethodHead {
		body = nil
	}

	preq, err := parseRequest(mi.vu.Runtime(), mi.vu.State(), call, method, rawURL, body, params)
	if err != nil {
		return mkFailed(resp, err)
	}
	return httpext.BatchParsedHTTPRequest{ParsedHTTPRequest: preq, Response: resp.Response}, resp, nil
}

func mkFailed(resp *Response, err error) (httpext.BatchParsedHTTPRequest, *Response, error) {
	resp.Error = err.Error()
	return httpext.BatchParsedHTTPRequest{}, resp, err
}
