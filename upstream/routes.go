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
// Static routes answer any method, as GoDoxy's bench server does.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		rootResponse.serve(w)
	case "/json":
		jsonResponse.serve(w)
	case "/healthz":
		healthzResponse.serve(w)
	case "/upload":
		s.serveUpload(w, r)
	case "/stream":
		s.serveStream(w, r)
	case "/sse":
		serveSSE(w, r)
	case "/ws":
		s.serveWS(w, r)
	case "/debug/conns":
		s.serveConns(w)
	default:
		notFoundResponse.serve(w)
	}
}
