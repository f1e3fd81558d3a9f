// The protocols a scenario can measure, and how k6 reaches each of them.
//
// h1 (HTTP/1.1 over TLS) needs GODEBUG=http2client=0: Go's HTTP client, and so k6, offers h2 by
// ALPN on every TLS connection and there is no per-request switch. setup() proves the protocol
// with one request before any load (see checks.js probeTarget).
//
// h3 (HTTP/3 over QUIC) goes through k6/x/proxybench/http3, our HTTP/3 client compiled into bin/k6 (k6/http
// speaks h1 and h2 only), to the target's TLS port number over UDP. It has k6/http's API and
// emits k6's own metrics with proto HTTP/3.0; `quic` marks it for what differs (lib/client.js).
//   mux: one connection carries concurrent streams (reused-* runs STREAMS per connection).
export const PROTOCOLS = {
  h1: { tls: true, scheme: 'https', ws: 'wss', expected: 'HTTP/1.1', godebug: 'http2client=0', mux: false, quic: false },
  h1c: { tls: false, scheme: 'http', ws: 'ws', expected: 'HTTP/1.1', godebug: '', mux: false, quic: false },
  h2: { tls: true, scheme: 'https', ws: 'wss', expected: 'HTTP/2.0', godebug: '', mux: true, quic: false },
  h3: { tls: true, scheme: 'https', ws: '', expected: 'HTTP/3.0', godebug: '', mux: true, quic: true },
};

// protocol returns the named protocol or throws, naming the variable it came from.
export function protocol(name, from = 'PROTO') {
  const p = PROTOCOLS[name];
  if (!p) {
    throw new Error(`unknown ${from} "${name}": protocols are ${Object.keys(PROTOCOLS).join(', ')}`);
  }
  return { name, ...p };
}
