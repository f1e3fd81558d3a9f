// The protocols a scenario can measure, and how k6 reaches each of them.
//
// h1 (HTTP/1.1 over TLS) needs GODEBUG=http2client=0: Go's HTTP client, and so k6, offers h2 by
// ALPN on every TLS connection and there is no per-request switch. setup() proves the protocol
// with one request before any load (see checks.js probeTarget).
export const PROTOCOLS = {
  h1: { tls: true, scheme: 'https', ws: 'wss', expected: 'HTTP/1.1', godebug: 'http2client=0' },
  h1c: { tls: false, scheme: 'http', ws: 'ws', expected: 'HTTP/1.1', godebug: '' },
  h2: { tls: true, scheme: 'https', ws: 'wss', expected: 'HTTP/2.0', godebug: '' },
};

// protocol returns the named protocol or throws, naming the variable it came from.
export function protocol(name, from = 'PROTO') {
  const p = PROTOCOLS[name];
  if (!p) {
    throw new Error(`unknown ${from} "${name}": protocols are ${Object.keys(PROTOCOLS).join(', ')}`);
  }
  return { name, ...p };
}
