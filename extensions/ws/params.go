package ws

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/types"
	"go.k6.io/k6/v2/metrics"
)

// defaultTimeout is k6/http's request timeout, for a call that gives none.
const defaultTimeout = 60 * time.Second

// session is one parsed ws.echo() call.
type session struct {
	url     *url.URL
	message string
	timeout time.Duration // the whole session's, from the dial to the echo
	tags    metrics.TagsAndMeta
}

// parseSession reads ws.echo(url, message, [params]). params: timeout (a duration or
// milliseconds, default 60 s), tags (added to every sample, as k6's).
func parseSession(rt *sobek.Runtime, state *lib.State, urlV, messageV, paramsV sobek.Value) (*session, error) {
	if common.IsNullish(urlV) {
		return nil, errors.New("ws.echo() needs a url")
	}
	u, err := url.Parse(urlV.String())
	if err != nil {
		return nil, fmt.Errorf("ws.echo() invalid url %q: %w", urlV.String(), err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, fmt.Errorf("ws.echo() needs a ws:// or wss:// url, got %q", urlV.String())
	}
	if common.IsNullish(messageV) {
		return nil, errors.New("ws.echo() needs a message to send")
	}
	s := &session{url: u, message: messageV.String(), timeout: defaultTimeout, tags: state.Tags.GetCurrentValues()}
	if common.IsNullish(paramsV) {
		return s, nil
	}
	params := paramsV.ToObject(rt)
	for _, k := range params.Keys() {
		v := params.Get(k)
		switch k {
		case "timeout":
			t, err := types.GetDurationValue(v.Export())
			if err != nil {
				return nil, fmt.Errorf("ws.echo() invalid params.timeout: %w", err)
			}
			if t <= 0 {
				return nil, fmt.Errorf("ws.echo() params.timeout must be positive, got %s", t)
			}
			s.timeout = t
		case "tags":
			if err := common.ApplyCustomUserTags(rt, &s.tags, v); err != nil {
				return nil, fmt.Errorf("ws.echo() invalid params.tags: %w", err)
			}
		default:
			return nil, fmt.Errorf("ws.echo() unknown param %q: it takes timeout and tags", k)
		}
	}
	return s, nil
}
