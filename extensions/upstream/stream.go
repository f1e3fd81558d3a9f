package upstream

import (
	"net/http"
	"time"
)

var streamParams = [...]intParam{
	{name: "chunks", def: 8, min: 1, max: 10000},
	{name: "chunk_bytes", def: 4096, min: 1, max: 1 << 20},
	{name: "interval_ms", def: 0, min: 0, max: 10000},
}

// serveStream sends chunks*chunk_bytes bytes without a Content-Length, so
// HTTP/1.1 frames them chunked, and flushes each chunk: a proxy that buffers
// shows up as a late first byte. It returns the body bytes written, fewer
// than asked when the client went away (chunked framing is net/http's, not
// counted).
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request) (written int64) {
	var v [len(streamParams)]int
	if err := parseInts(r.URL.RawQuery, streamParams[:], v[:]); err != nil {
		return httpError(w, err.Error(), http.StatusBadRequest)
	}
	chunk := h.pattern[:v[1]]
	hdr := w.Header()
	hdr["Content-Type"] = contentTypeOctets
	hdr["Cache-Control"] = noCache
	return writePaced(r.Context(), w, time.Duration(v[2])*time.Millisecond, v[0], func(int) []byte { return chunk })
}
