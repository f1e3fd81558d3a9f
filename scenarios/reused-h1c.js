// reused-h1c: steady-state throughput of cleartext HTTP/1.1 on kept-alive connections.
// Each VU is one keep-alive connection sending GET / one request after another, for DURATION,
// after an unmeasured warm-up. Every response is checked: 200, 4096 bytes, HTTP/1.1.
import http from 'k6/http';
import { rootScenario } from './lib/scenario.js';

const s = rootScenario({ scenario: 'reused-h1c', client: http });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
