// equal-load on the native loop for h1c, h1 and h2: the open model as wrk2 runs it, driven by
// k6/x/proxybench/load (only in bin/k6). CONNECTIONS kept-alive connections carry RATE requests
// a second on a fixed schedule, and every latency is measured from when its request was due, so
// a target that falls behind shows it as latency (and behind_schedule), never as fewer
// requests; k6's own cost per request no longer sets the rate it can hold. Over h2 each request
// is a stream of its own on its VU's connection. h3 runs k6's batches, as scenarios/equal-load.js
// does. make k6 and make bench run this one unless CLIENT=k6.
'use k6 with k6/x/proxybench/load';
import { equalLoadScenario } from '../lib/equalload.js';
import { nativeLoop } from '../lib/native.js';

const s = equalLoadScenario({ scenario: 'equal-load', nativeLoop });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
