package ws

import (
	"context"
	"strconv"
	"time"

	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
)

// emitter pushes k6's own WebSocket metrics for one session, with the tags k6/websockets
// gives them (the VU's, params.tags, url and name, status), so that a script reads the same
// ws_sessions{status:101}, ws_connecting and ws_msgs_* whichever client made them.
type emitter struct {
	ctx     context.Context
	state   *lib.State
	builtin *metrics.BuiltinMetrics
	tags    metrics.TagsAndMeta
}

func newEmitter(ctx context.Context, state *lib.State, s *session) *emitter {
	tags := s.tags.Clone()
	sys := state.Options.SystemTags
	// k6 tags url with the name tag when the script set one, and both with the url otherwise
	if name, ok := tags.Tags.Get(metrics.TagName.String()); ok {
		tags.SetSystemTagOrMetaIfEnabled(sys, metrics.TagURL, name)
	} else {
		tags.SetSystemTagOrMetaIfEnabled(sys, metrics.TagURL, s.url.String())
		tags.SetSystemTagOrMetaIfEnabled(sys, metrics.TagName, s.url.String())
	}
	return &emitter{ctx: ctx, state: state, builtin: state.BuiltinMetrics, tags: tags}
}

func (e *emitter) push(m *metrics.Metric, at time.Time, value float64) {
	metrics.PushIfNotDone(e.ctx, e.state.Samples, metrics.Sample{
		TimeSeries: metrics.TimeSeries{Metric: m, Tags: e.tags.Tags},
		Time:       at,
		Metadata:   e.tags.Metadata,
		Value:      value,
	})
}

// connected counts the session (ws_sessions, tagged with the upgrade's status: 0 when none
// came) and how long its connect and upgrade took (ws_connecting), failed or not.
func (e *emitter) connected(start time.Time, r *Result) {
	e.tags.SetSystemTagOrMetaIfEnabled(e.state.Options.SystemTags, metrics.TagStatus, strconv.Itoa(r.Status))
	now := time.Now()
	e.push(e.builtin.WSSessions, now, 1)
	e.push(e.builtin.WSConnecting, now, metrics.D(now.Sub(start)))
}

func (e *emitter) sent()     { e.push(e.builtin.WSMessagesSent, time.Now(), 1) }
func (e *emitter) received() { e.push(e.builtin.WSMessagesReceived, time.Now(), 1) }

// ended times a session that went to its end (ws_session_duration).
func (e *emitter) ended(start time.Time) {
	e.push(e.builtin.WSSessionDuration, time.Now(), metrics.D(time.Since(start)))
}
