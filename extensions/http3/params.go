package http3

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext/httpext"
	"go.k6.io/k6/v2/lib/types"
	"gopkg.in/guregu/null.v3"
)

// defaultTimeout is k6/http's request timeout.
const defaultTimeout = 60 * time.Second

// supportedParams are the request params keys the module understands. Any
// other key is an error rather than silently ignored, so that a script written
// for k6/http (jar, auth, compression, responseCallback, …) doesn't run with a
// behaviour it didn't ask for.
var supportedParams = []string{"headers", "redirects", "responseType", "tags", "throw", "timeout"}

// parseRequest turns the JS arguments of a request into k6's
// ParsedHTTPRequest, with k6/http's defaults (timeout 60 s, the throw,
// maxRedirects, userAgent and discardResponseBodies options, the VU's tags and
// cookie jar) and k6/http's meaning for each params key:
//
//   - headers: request headers; Host sets the :authority (the SNI stays the
//     URL's host, as with k6/http);
//   - tags: added to the request's metric samples;
//   - timeout: a duration ("10s") or milliseconds;
//   - responseType: "text" (default), "binary" (an ArrayBuffer) or "none";
//   - throw: throw on a request error instead of returning status 0;
//   - redirects: how many redirects to follow.
func parseRequest(
	rt *sobek.Runtime, state *lib.State, call, method string, rawURL, body any, params sobek.Value,
) (*httpext.ParsedHTTPRequest, error) {
	if v, ok := rawURL.(sobek.Value); ok {
		rawURL = v.Export()
	}
	u, err := httpext.ToURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	if u.GetURL().Scheme != "https" {
		return nil, fmt.Errorf("%s needs an https:// URL (HTTP/3 runs over QUIC and TLS), got %q", call, u.Clean())
	}

	preq := &httpext.ParsedHTTPRequest{
		URL: &u,
		Req: &http.Request{
			Method: method,
			URL:    u.GetURL(),
			Header: make(http.Header),
		},
		Timeout:          defaultTimeout,
		Throw:            state.Options.Throw.Bool,
		Redirects:        state.Options.MaxRedirects,
		Cookies:          make(map[string]*httpext.HTTPRequestCookie),
		ResponseCallback: expectedStatus,
		TagsAndMeta:      state.Tags.GetCurrentValues(),
		ActiveJar:        state.CookieJar,
	}
	if state.Options.DiscardResponseBodies.Bool {
		preq.ResponseType = httpext.ResponseTypeNone
	} else {
		preq.ResponseType = httpext.ResponseTypeText
	}
	if state.Options.UserAgent.Valid {
		preq.Req.Header.Set("User-Agent", state.Options.UserAgent.String)
	}

	if preq.Body, err = requestBody(body, preq.Req.Header); err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	if err := applyParams(rt, call, preq, params); err != nil {
		return nil, err
	}
	if preq.ActiveJar != nil {
		httpext.SetRequestCookies(preq.Req, preq.ActiveJar, preq.Cookies)
	}
	return preq, nil
}

// requestBody accepts what k6/http accepts but files: a string, an
// ArrayBuffer or an object (sent form-urlencoded).
func requestBody(body any, header http.Header) (*bytes.Buffer, error) {
	switch b := body.(type) {
	case nil:
		return nil, nil //nolint:nilnil // no body
	case string:
		return bytes.NewBufferString(b), nil
	case []byte:
		return bytes.NewBuffer(b), nil
	case sobek.ArrayBuffer:
		return bytes.NewBuffer(b.Bytes()), nil
	case map[string]any:
		form := make(url.Values, len(b))
		for k, v := range b {
			if arr, ok := v.([]any); ok {
				for _, el := range arr {
					form.Add(k, fmt.Sprint(el))
				}
				continue
			}
			form.Set(k, fmt.Sprint(v))
		}
		header.Set("Content-Type", "application/x-www-form-urlencoded")
		return bytes.NewBufferString(form.Encode()), nil
	default:
		return nil, fmt.Errorf("unsupported request body type %T (use a string, an ArrayBuffer or an object)", body)
	}
}

// applyParams applies the params object of a request.
func applyParams(rt *sobek.Runtime, call string, preq *httpext.ParsedHTTPRequest, params sobek.Value) error {
	if common.IsNullish(params) {
		return nil
	}
	obj := params.ToObject(rt)
	for _, k := range obj.Keys() {
		v := obj.Get(k)
		switch k {
		case "headers":
			if common.IsNullish(v) {
				continue
			}
			headers := v.ToObject(rt)
			for _, name := range headers.Keys() {
				value := headers.Get(name).String()
				if strings.EqualFold(name, "host") {
					preq.Req.Host = value
				}
				preq.Req.Header.Set(name, value)
			}
		case "tags":
			if err := common.ApplyCustomUserTags(rt, &preq.TagsAndMeta, v); err != nil {
				return fmt.Errorf("%s: invalid params.tags: %w", call, err)
			}
		case "timeout":
			t, err := types.GetDurationValue(v.Export())
			if err != nil {
				return fmt.Errorf("%s: invalid params.timeout: %w", call, err)
			}
			if t <= 0 {
				return fmt.Errorf("%s: params.timeout must be positive, got %s", call, t)
			}
			preq.Timeout = t
		case "responseType":
			responseType, err := httpext.ResponseTypeString(v.String())
			if err != nil {
				return fmt.Errorf("%s: invalid params.responseType %q (use \"text\", \"binary\" or \"none\")",
					call, v.String())
			}
			preq.ResponseType = responseType
		case "throw":
			preq.Throw = v.ToBoolean()
		case "redirects":
			preq.Redirects = null.IntFrom(v.ToInteger())
		default:
			return unsupportedParamError(call, k)
		}
	}
	return nil
}

func unsupportedParamError(call, key string) error {
	supported := append([]string(nil), supportedParams...)
	sort.Strings(supported)
	return fmt.Errorf("%s does not support params.%s (supported: %s)", call, key, strings.Join(supported, ", "))
}
