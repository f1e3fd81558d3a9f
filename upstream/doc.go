// Command upstream is the origin server every proxy under test forwards to,
// and, on its TLS listener (TCP: HTTP/1.1 and HTTP/2; UDP on the same port:
// HTTP/3 over QUIC), the "direct" target: the no-proxy baseline.
//
// It must never be the bottleneck of a benchmark, so the hot routes (/ and
// /json) write pre-built bytes with pre-built header values and allocate
// nothing beyond what net/http itself does.
//
// Routes (compatible with GoDoxy's bench server):
//
//	/                 4096-byte deterministic body, application/octet-stream
//	/healthz          "ok"
//	/json             small static JSON document (jsonDoc)
//	/upload           POST or PUT; drains the body and replies {"bytes":N}
//	/stream           chunked body flushed chunk by chunk
//	                  ?chunks=1..10000 (8) &chunk_bytes=1..1048576 (4096) &interval_ms=0..10000 (0)
//	/sse              text/event-stream of "tick" events {"seq":N,"ts":unix-ms}, seq from 0
//	                  ?count=1..10000 (3) &interval_ms=0..60000 (150)
//	/ws               WebSocket: a text welcome {"hello":"bench"}, then echo
//	/debug/conns      {"h1c":N,"tls":M,"h3":K}: connections accepted per listener
//	/debug/served     {"h1c":{"/":{"requests":N,"bytes":B},...},"tls":{...},"h3":{...}}:
//	                  answers and body bytes per listener and route (not /debug/*, not 404s)
//
// Anything else is 404; a malformed or out-of-range parameter is 400 with a
// plain-text message naming it and its range.
package main
