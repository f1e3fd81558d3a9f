// reused-h1: steady-state throughput of HTTP/1.1 over TLS on kept-alive connections (run with
// GODEBUG=http2client=0: Go, and so k6, offers h2 by ALPN otherwise).
// Each VU is one keep-alive connection sending GET / one request after another, for DURATION,
// after an unmeasured warm-up. Every response is checked: 200, 4096 bytes, HTTP/1.1.
import http from 'k6/http';
import { rootScenario } from './lib/scenario.js';

const s = rootScenario({ scenario: 'reused-h1', client: http });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
