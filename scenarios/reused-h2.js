// reused-h2: steady-state throughput of HTTP/2 over TLS (ALPN h2) on kept-alive connections.
// Each VU is one connection carrying STREAMS concurrent streams: every iteration is one
// http.batch of STREAMS GET / requests, multiplexed on the VU's connection (lib/scenario.js
// batchScenario). Every response is checked: 200, 4096 bytes, HTTP/2.0. The upstream's
// connection counter shows one TLS connection per VU (plus setup's).
import http from 'k6/http';
import { batchScenario } from './lib/scenario.js';

const s = batchScenario({ scenario: 'reused-h2', client: http });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
