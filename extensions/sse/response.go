package sse

import (
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/lib/netext/httpext"
	"go.k6.io/k6/v2/metrics"
)

// Result is the outcome of one sse.get() or sse.stream() call. Durations are
// measured from the start of the request (the first RoundTrip, so after k6's
// rps limiter and before any dial).
type Result struct {
	mode mode

	// As k6/http: 0 with Error and ErrorCode set when the request failed,
	// including a failure (e.g. a timeout) in the middle of the body.
	Status    int
	Proto     string
	Headers   map[string]string
	Error     string
	ErrorCode int

	Bytes        int64
	HasFirstByte bool
	FirstByte    time.Duration // response headers received
	Duration     time.Duration // until the body ended, failed or was cut at maxEvents

	Events []timedEvent    // sse.get()
	Chunks []time.Duration // sse.stream(): when each read returned data
	// ChunkSizes are the bytes each of those reads returned: with them a script can tell when
	// the Nth byte arrived, so when each of the server's chunks was whole, however a proxy or
	// the network split or merged them into reads.
	ChunkSizes []int64

	// Checked: the body was compared with the stream param expect as it was read.
	// BodyDiffersAt is then the 0-based offset of its first (decoded) byte that differs from
	// expect's at the same offset, -1 when none does. Only the bytes both have are compared: a
	// body shorter or longer than expect, and otherwise the same, is -1, and its size (Bytes)
	// tells it apart.
	Checked       bool
	BodyDiffersAt int64
}

// newResult merges what k6 reports (status, errors) with what the tap saw.
// rec may be nil (the request was never sent) and so may resp.
func newResult(m mode, rec *recorder, resp *httpext.Response) *Result {
	res := &Result{mode: m, Headers: map[string]string{}}
	if resp != nil {
		res.Status = resp.Status
		res.Proto = resp.Proto
		res.Error = resp.Error
		res.ErrorCode = resp.ErrorCode
		if resp.Headers != nil {
			res.Headers = resp.Headers
		}
	}
	if rec != nil && rec.expect != nil {
		res.Checked, res.BodyDiffersAt = true, -1
	}
	if rec == nil || rec.start.IsZero() {
		return res
	}

	h := rec.cur
	end := h.end
	if end.IsZero() {
		end = rec.now()
	}
	res.Duration = rec.since(end)
	res.Bytes = h.bytes
	if !h.headersAt.IsZero() {
		res.HasFirstByte = true
		res.FirstByte = rec.since(h.headersAt)
	}
	res.Events = h.events
	res.Chunks = h.chunks
	res.ChunkSizes = h.sizes
	if h.check != nil {
		res.BodyDiffersAt = h.check.differsAt
	}
	return res
}

// FirstEvent is when the first complete event arrived.
func (r *Result) FirstEvent() (time.Duration, bool) {
	if len(r.Events) == 0 {
		return 0, false
	}
	return r.Events[0].At, true
}

// Gaps are the times between consecutive events.
func (r *Result) Gaps() []time.Duration {
	if len(r.Events) < 2 {
		return nil
	}
	gaps := make([]time.Duration, 0, len(r.Events)-1)
	for i := 1; i < len(r.Events); i++ {
		gaps = append(gaps, r.Events[i].At-r.Events[i-1].At)
	}
	return gaps
}

// FirstChunk is when the first read that returned body data did so.
func (r *Result) FirstChunk() (time.Duration, bool) {
	if len(r.Chunks) == 0 {
		return 0, false
	}
	return r.Chunks[0], true
}

// toJS builds a plain JS object (so JSON.stringify, spreading and
// Array.isArray behave as on any object), durations in milliseconds.
func (r *Result) toJS(rt *sobek.Runtime) *sobek.Object {
	obj := rt.NewObject()
	set := func(k string, v any) { _ = obj.Set(k, v) }
	ms := func(d time.Duration, ok bool) sobek.Value {
		if !ok {
			return sobek.Null()
		}
		return rt.ToValue(metrics.D(d))
	}
	msList := func(ds []time.Duration) *sobek.Object {
		vals := make([]any, len(ds))
		for i, d := range ds {
			vals[i] = metrics.D(d)
		}
		return rt.NewArray(vals...)
	}
	headers := rt.NewObject()
	for k, v := range r.Headers {
		_ = headers.Set(k, v)
	}

	set("status", r.Status)
	set("proto", r.Proto)
	set("headers", headers)
	set("bytes", r.Bytes)
	set("first_byte_ms", ms(r.FirstByte, r.HasFirstByte))

	switch r.mode {
	case modeEvents:
		events := make([]any, len(r.Events))
		for i, ev := range r.Events {
			e := rt.NewObject()
			_ = e.Set("event", ev.Type)
			_ = e.Set("data", ev.Data)
			_ = e.Set("id", ev.ID)
			_ = e.Set("at_ms", metrics.D(ev.At))
			events[i] = e
		}
		set("events", rt.NewArray(events...))
		set("first_event_ms", ms(r.FirstEvent()))
		set("gaps_ms", msList(r.Gaps()))
	case modeChunks:
		set("chunks_ms", msList(r.Chunks))
		sizes := make([]any, len(r.ChunkSizes))
		for i, n := range r.ChunkSizes {
			sizes[i] = n
		}
		set("chunks_bytes", rt.NewArray(sizes...))
		set("first_chunk_ms", ms(r.FirstChunk()))
		if r.Checked {
			set("body_differs_at", r.BodyDiffersAt)
		}
	}

	set("duration_ms", metrics.D(r.Duration))
	set("error", r.Error) // "" when none, as k6/http
	set("error_code", r.ErrorCode)
	return obj
}
