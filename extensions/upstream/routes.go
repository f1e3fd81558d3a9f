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

// route is one path the upstream answers and counts in /debug/served: a fixed answer (static),
// or a handler (serve) that writes the answer and counts it in served, its cell of
// /debug/served on the request's listener.
type route struct {
	path   string
	static *staticResponse
	serve  func(h *Handler, w http.ResponseWriter, r *http.Request, served *servedCell)
}

// routes is every route but /debug/*, in /debug/served's order. A new route is one line here
// and its handler: its dispatch, its counting, its /debug/served key and the check that every
// listener shows it come from this table.
var routes = [...]route{
	{path: "/", static: &rootResponse},
	{path: "/json", static: &jsonResponse},
	{path: "/healthz", static: &healthzResponse},
	{path: "/bytes", serve: answer((*Handler).serveBytes)},
	{path: "/upload", serve: answer((*Handler).serveUpload)},
	{path: "/stream", serve: answer((*Handler).serveStream)},
	{path: "/sse", serve: answer((*Handler).serveSSE)},
	// counts itself: a session's bytes are written after its upgrade, long after the request
	{path: "/ws", serve: (*Handler).serveWS},
}

// answer is a route whose handler returns the body bytes it wrote: the answer is counted once
// the handler returns, before the client can have all of it.
func answer(serve func(*Handler, http.ResponseWriter, *http.Request) int64) func(*Handler, http.ResponseWriter, *http.Request, *servedCell) {
	return func(h *Handler, w http.ResponseWriter, r *http.Request, served *servedCell) {
		served.count(r, serve(h, w, r))
	}
}

// Handler serves every route of the upstream; one is shared by every listener. What it serves
// is built once, by NewHandler, so that requests only copy bytes.
type Handler struct {
	uploadLimit int64
	conns       connCounters
	served      servedCounters
	// pattern backs every /bytes body and /stream chunk: a prefix of it is the body or the
	// chunk (Pattern(MaxBytes), the largest of either).
	pattern  []byte
	ws       wsRegistry
	upgrader websocket.Upgrader
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns the routes with /upload taking bodies of up to uploadLimit bytes
// (DefaultUploadLimit: the upstream's default).
func NewHandler(uploadLimit int64) *Handler {
	return &Handler{
		uploadLimit: uploadLimit,
		served:      newServedCounters(),
		pattern:     servedPattern(),
		ws:          wsRegistry{conns: make(map[*websocket.Conn]struct{})},
		upgrader:    newUpgrader(),
	}
}

// ServeHTTP routes on the exact path, no mux: a scan of routes (/ and /json first), then
// /debug/*. Every answer of a route in routes is counted; /debug/* and 404s are not, so
// reading the counters does not move them. A static answer allocates nothing.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for i := range routes {
		if rt := &routes[i]; r.URL.Path == rt.path {
			served := h.served.cell(r, i)
			if rt.static != nil {
				// any method, as GoDoxy's bench server does
				served.count(r, rt.static.serve(w))
			} else {
				rt.serve(h, w, r, served)
			}
			return
		}
	}
	switch r.URL.Path {
	case "/debug/conns":
		h.serveConns(w)
	case "/debug/served":
		h.serveServed(w)
	default:
		notFoundResponse.serve(w)
	}
}
