// fresh-h3: every request on a brand-new connection — HTTP/3: a new UDP socket, a full QUIC
// handshake (TLS 1.3 inside QUIC, no 0-RTT, no resumption), one request, then the connection is
// closed (H3_NO_ERROR), through k6/x/proxybench/http3 with noConnectionReuse.
// REQUESTS iterations shared by FRESH_CONNECTIONS VUs. It is proved, not assumed: a request
// counts in new_connections only if k6/x/proxybench/http3 timed a QUIC handshake for it
// (timings.tls_handshaking > 0; connecting is the socket's opening, a few µs), and the run is
// valid only if new_connections == requests. rps = requests / (first request start → last
// response end).
//
// quic-go servers (direct, Caddy) queue at most 32 completed handshakes for their accept loop
// and refuse the others with CONNECTION_REFUSED (error_code 1212): with FRESH_CONNECTIONS above
// 32 such refusals are the server's limit, not the client's. The smoke profile opens 32 at a
// time; stable (64) and stress (100) can hit it on a busy machine.
'use k6 with k6/x/proxybench/http3';
import { extension } from './lib/extension.js';
import { rootScenario } from './lib/scenario.js';

const http3 = extension('k6/x/proxybench/http3');

const s = rootScenario({ scenario: 'fresh-h3', client: http3 });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
