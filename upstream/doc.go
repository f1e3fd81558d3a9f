// Command upstream is the origin server every proxy under test forwards to,
// and, on its TLS listener (TCP: HTTP/1.1 and HTTP/2; UDP on the same port:
// HTTP/3 over QUIC), the "direct" target: the no-proxy baseline.
//
// It is the flags, the listeners they name, the TLS profile and the signals:
// the routes, their answers and the servers on the listeners are package
// upstream (extensions/upstream), which the test servers serve too.
package main
