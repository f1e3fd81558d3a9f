// reused-h1c on the native loop: steady-state throughput of cleartext HTTP/1.1
// on kept-alive connections, one per VU, driven by k6/x/proxybench/load (only in bin/k6).
// The same run as scenarios/reused-h1c.js, at a fraction of the client's CPU per request;
// make k6 and make bench run this one unless CLIENT=k6. Every response is checked in Go.
'use k6 with k6/x/proxybench/load';
import { nativeScenario } from '../lib/native.js';

const s = nativeScenario({ scenario: 'reused-h1c' });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
