package http3

import (
	"encoding/json"
	"errors"

	"github.com/grafana/sobek"
	"github.com/tidwall/gjson"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/lib/netext/httpext"
)

// Response is what a request returns to the script: k6's own response object
// (httpext.Response, the one k6/http returns), so a script reads the same
// fields: status, status_text, proto ("HTTP/3.0"), body, headers, cookies,
// timings {blocked, connecting, tls_handshaking, sending, waiting, receiving,
// duration}, tls_version, tls_cipher_suite, remote_ip, remote_port, error,
// error_code, url and request; plus json([selector]).
type Response struct {
	*httpext.Response `js:"-"`

	rt         *sobek.Runtime
	cachedJSON any
}

// errNullBody is thrown by json() on a response without a body.
var errNullBody = errors.New("http3 response.json(): the body is null " +
	"(the request failed, or responseType was \"none\")")

// newResponse wraps k6's response; a binary body becomes an ArrayBuffer, as
// k6/http does.
func (mi *ModuleInstance) newResponse(resp *httpext.Response, respType httpext.ResponseType) *Response {
	if respType == httpext.ResponseTypeBinary {
		if b, ok := resp.Body.([]byte); ok {
			resp.Body = mi.vu.Runtime().NewArrayBuffer(b)
		}
	}
	return &Response{Response: resp, rt: mi.vu.Runtime()}
}

// JSON parses the body as JSON; with a selector (gjson syntax, as k6/http's
// json()) it returns only that part, or undefined.
func (r *Response) JSON(selector ...string) sobek.Value {
	if r.Body == nil {
		common.Throw(r.rt, errNullBody)
	}
	body, err := common.ToBytes(r.Body)
	if err != nil {
		common.Throw(r.rt, err)
	}
	if len(selector) > 0 {
		if !gjson.ValidBytes(body) {
			return sobek.Undefined()
		}
		result := gjson.GetBytes(body, selector[0])
		if !result.Exists() {
			return sobek.Undefined()
		}
		return r.rt.ToValue(result.Value())
	}
	if r.cachedJSON == nil {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			common.Throw(r.rt, err)
		}
		r.cachedJSON = v
	}
	return r.rt.ToValue(r.cachedJSON)
}
