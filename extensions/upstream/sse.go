package upstream

import (
	"net/http"
	"strconv"
	"time"
)

var sseParams = [...]intParam{
	{name: "count", def: 3, min: 1, max: 10000},
	{name: "interval_ms", def: 150, min: 0, max: 60000},
}

// serveSSE sends count "tick" events, the first at once and then one per
// interval, each flushed on its own: time to first event measures whether a
// proxy passes an event stream through as it comes. It returns the body
// bytes written, fewer than the events' when the client went away.
func (*Handler) serveSSE(w http.ResponseWriter, r *http.Request) (written int64) {
	var v [len(sseParams)]int
	if err := parseInts(r.URL.RawQuery, sseParams[:], v[:]); err != nil {
		return httpError(w, err.Error(), http.StatusBadRequest)
	}
	h := w.Header()
	h["Content-Type"] = contentTypeSSE
	h["Cache-Control"] = noCache
	buf := make([]byte, 0, 96)
	return writePaced(r.Context(), w, time.Duration(v[1])*time.Millisecond, v[0], func(seq int) []byte {
		buf = appendTick(buf[:0], seq, time.Now())
		return buf
	})
}

// appendTick appends one event: `event: tick`, `data: {"seq":N,"ts":ms}`.
func appendTick(b []byte, seq int, now time.Time) []byte {
	b = append(b, "event: tick\ndata: {\"seq\":"...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, now.UnixMilli(), 10)
	return append(b, "}\n\n"...)
}
