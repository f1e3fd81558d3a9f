package http3

import (
	"context"
	"errors"
	"net/http"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext/httpext"
)

// errInitContext is returned when a request is made in the init context.
var errInitContext = common.NewInitContextError("making http3 requests in the init context is not supported")

// request is http3.request(method, url, [body], [params]).
func (mi *ModuleInstance) request(method string, url sobek.Value, args ...sobek.Value) (*Response, error) {
	body, params := splitArgs(args)
	return mi.do("http3.request()", method, url, body, params)
}

// withoutBody is http3.get/head(url, [params]).
func (mi *ModuleInstance) withoutBody(call, method string) func(sobek.Value, ...sobek.Value) (*Response, error) {
	return func(url sobek.Value, args ...sobek.Value) (*Response, error) {
		var params sobek.Value
		if len(args) > 0 {
			params = args[0]
		}
		return mi.do(call, method, url, nil, params)
	}
}

// withBody is http3.post/put/patch/del/options(url, [body], [params]).
func (mi *ModuleInstance) withBody(call, method string) func(sobek.Value, ...sobek.Value) (*Response, error) {
	return func(url sobek.Value, args ...sobek.Value) (*Response, error) {
		body, params := splitArgs(args)
		return mi.do(call, method, url, body, params)
	}
}

func splitArgs(args []sobek.Value) (body any, params sobek.Value) {
	if len(args) > 0 && !common.IsNullish(args[0]) {
		body = args[0].Export()
	}
	if len(args) > 1 {
		params = args[1]
	}
	return body, params
}

// do makes one request with k6's own machinery: httpext.MakeRequest times it
// (httpext.Tracer), emits its samples, reads the body by responseType and
// applies timeout, redirects and throw, exactly as for k6/http, on a copy of
// the VU state whose Transport is this VU's HTTP/3 pool.
func (mi *ModuleInstance) do(call, method string, url sobek.Value, body any, params sobek.Value) (*Response, error) {
	state := mi.vu.State()
	if state == nil {
		return nil, errInitContext
	}
	preq, err := parseRequest(mi.vu.Runtime(), state, call, method, url, body, params)
	if err != nil {
		return mi.failedRequest(state, err)
	}
	ctx := mi.vu.Context()
	resp, err := httpext.MakeRequest(ctx, mi.requestState(ctx, state), preq)
	if err != nil {
		return nil, err // throw: true
	}
	return mi.newResponse(resp, preq.ResponseType), nil
}

// requestState is the VU's state with its Transport swapped for the HTTP/3
// pool, for k6's httpext functions, which send through state.Transport. It is
// a copy per call, so the cookie jar and the tags are the current ones.
func (mi *ModuleInstance) requestState(ctx context.Context, state *lib.State) *lib.State {
	st := *state
	st.Transport = mi.RoundTripper(ctx, state)
	return &st
}

// failedRequest handles a request that couldn't be made (bad URL, params): as
// k6/http does, it throws with the throw option, else it logs and returns a
// response with status 0 and the error.
func (mi *ModuleInstance) failedRequest(state *lib.State, err error) (*Response, error) {
	if state.Options.Throw.Bool {
		return nil, err
	}
	state.Logger.WithField("error", err).Warn("Request Failed")
	r := httpext.NewResponse()
	r.Body = nil // null, as for a request that failed on the network
	r.Error = err.Error()
	var k6e httpext.K6Error
	if errors.As(err, &k6e) {
		r.ErrorCode = int(k6e.Code)
	}
	return mi.newResponse(r, httpext.ResponseTypeText), nil
}

// methods are the request functions the module exports, by JS name.
func (mi *ModuleInstance) methods() map[string]any {
	return map[string]any{
		"request": mi.request,
		"get":     mi.withoutBody("http3.get()", http.MethodGet),
		"head":    mi.withoutBody("http3.head()", http.MethodHead),
		"post":    mi.withBody("http3.post()", http.MethodPost),
		"put":     mi.withBody("http3.put()", http.MethodPut),
		"patch":   mi.withBody("http3.patch()", http.MethodPatch),
		"del":     mi.withBody("http3.del()", http.MethodDelete),
		"options": mi.withBody("http3.options()", http.MethodOptions),
		"batch":   mi.batch,
	}
}
