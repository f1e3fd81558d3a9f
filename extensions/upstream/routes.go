package upstream

import (
	"net/http"

	"github.com/gorilla/websocket"
)

// Header values are shared, never mutated slices: assigning them to the
// header map directly skips the canonicalisation and the allocation of
// Header.Set on every request.
var (
	contentTypeOctets = []string{"application/octet-stream"}
	contentTypeJSON   = []string{"application/json"}
	contentTypeText   = []string{"text/plain; charset=utf-8"}
	contentTypeSSE    = []string{"text/event-stream"}
	noCache           = []string{"no-cache"}
	noStore           = []string{"no-store"}
)

// Handler serves every route of the upstream; one is shared by every listener. What it serves
// is built once, by NewHandler, so that requests only copy bytes.
type Handler struct {
	uploadLimit int64
	conns       connCounters
	served      servedCounters
	// streamChunk backs every /stream chunk: a prefix of it is the chunk.
	streamChunk []byte
	ws          wsRegistry
	upgrader    websocket.Upgrader
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns the routes with /upload taking bodies of up to uploadLimit bytes
// (DefaultUploadLimit: the upstream's default).
func NewHandler(uploadLimit int64) *Handler {
	h := &Handler{
		uploadLimit: uploadLimit,
		streamChunk: Pattern(streamParams[1].max),
		ws:          wsRegistry{conns: make(map[*websocket.Conn]struct{})},
	}
	h.upgrader = newUpgrader(h)
	return h
}

// ServeHTTP routes on the exact path with a switch: no mux, no allocation.
// Static routes answer any method, as GoDoxy's bench server does. Every
// answer of a route in routeNames is counted in h.served once written,
// before the handler returns and so before the client can have all of it;
// /debug/* and 404s are not, so reading the counters does not move them.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var route routeID
	var n int64 // body bytes written
	switch r.URL.Path {
	case "/":
		route, n = routeRoot, rootResponse.serve(w)
	case "/json":
		route, n = routeJSON, jsonResponse.serve(w)
	case "/healthz":
		route, n = routeHealthz, healthzResponse.serve(w)
	case "/upload":
		route, n = routeUpload, h.serveUpload(w, r)
	case "/stream":
		route, n = routeStream, h.serveStream(w, r)
	case "/sse":
		route, n = routeSSE, h.serveSSE(w, r)
	case "/ws":
		// counts itself: a session's bytes are written after its upgrade,
		// long after the request
		h.serveWS(w, r)
		return
	case "/debug/conns":
		h.serveConns(w)
		return
	case "/debug/served":
		h.serveServed(w)
		return
	default:
		notFoundResponse.serve(w)
		return
	}
	h.served.count(r, route, n)
}
