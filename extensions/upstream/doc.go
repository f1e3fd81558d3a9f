// Package upstream is the upstream's routes and handlers, served by the upstream binary in
// ../../upstream and by the test servers (extensions/http3/internal/h3server, the test that
// holds scenarios/lib/bodies.js to the bodies): one copy of every body and every answer.
//
// It is shared code, not a k6 extension: nothing of the k6 build imports it.
//
// The routes are the table routes (routes.go); what each answers, its parameters and its
// errors are in upstream/README.md, "Routes". [Handler] is the routes alone, for a server of
// the caller's own; [Serve] serves them on bound listeners as the upstream binary does:
// cleartext HTTP/1.1, HTTP/2 and HTTP/1.1 over TLS, HTTP/3.
//
// The upstream must never be the bottleneck of a benchmark, so the hot routes (/ and /json)
// write pre-built bytes with pre-built header values and allocate nothing beyond what net/http
// itself does.
package upstream
