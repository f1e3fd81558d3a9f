package main

import "net/http"

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

var _ http.Handler = (*server)(nil)

// ServeHTTP routes on the exact path with a switch: no mux, no allocation.
// Static routes answer any method, as GoDoxy's bench server does. Every
// answer of a route in routeNames is counted in s.served once written,
// before the handler returns and so before the client can have all of it;
// /debug/* and 404s are not, so reading the counters does not move them.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
		route, n = routeUpload, s.serveUpload(w, r)
	case "/stream":
		route, n = routeStream, s.serveStream(w, r)
	case "/sse":
		route, n = routeSSE, serveSSE(w, r)
	case "/ws":
		// counts itself: a session's bytes are written after its upgrade,
		// long after the request
		s.serveWS(w, r)
		return
	case "/debug/conns":
		s.serveConns(w)
		return
	case "/debug/served":
		s.serveServed(w)
		return
	default:
		notFoundResponse.serve(w)
		return
	}
	s.served.count(r, route, n)
}
