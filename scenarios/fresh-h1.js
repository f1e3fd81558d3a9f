// fresh-h1: every request on a brand-new connection — HTTP/1.1 over TLS: TCP connect, full
// TLS handshake, one request (run with GODEBUG=http2client=0: Go, and so k6, offers h2 otherwise).
// REQUESTS iterations shared by FRESH_CONNECTIONS VUs, keep-alive off (noConnectionReuse,
// noVUConnectionReuse). It is proved, not assumed: a request counts in new_connections only if
// k6 timed a TCP connect and a TLS handshake for it, and the run is valid only if
// new_connections == requests. rps = requests / (first request start → last response end).
import http from 'k6/http';
import { rootScenario } from './lib/scenario.js';

const s = rootScenario({ scenario: 'fresh-h1', client: http });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
