// reused-h2 on the native loop: steady-state throughput of HTTP/2 over TLS (ALPN h2) on
// kept-alive connections, one per VU, each keeping STREAMS streams in flight (as h2load -m does), driven by k6/x/proxybench/load (only in bin/k6).
// The same run as scenarios/reused-h2.js, at a fraction of the client's CPU per request;
// make k6 and make bench run this one unless CLIENT=k6. Every response is checked in Go.
'use k6 with k6/x/proxybench/load';
import { nativeScenario } from '../lib/native.js';

const s = nativeScenario({ scenario: 'reused-h2' });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
