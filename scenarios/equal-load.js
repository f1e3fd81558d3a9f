// equal-load: latency at the same offered load for every target (open model). k6's
// constant-arrival-rate executor starts RATE requests per second of GET /, whatever the target's
// latency, for DURATION after an unmeasured warm-up at the same rate, over PROTO (h1, h1c, h2 or
// h3; h3 through k6/x/proxybench/http3; h1 needs GODEBUG=http2client=0). The runner sets RATE to half the
// slowest valid target's median reused req/s, so every target is measured below its limit and
// the percentiles (p50, p99, p99.9) compare like with like. Every response is checked: 200,
// 4096 bytes, PROTO.
//
// h2 and h3 are multiplexed as in the reused cells: CONNECTIONS VUs, each one connection, and
// every iteration one batch of STREAMS requests on it, started RATE/STREAMS times a second.
// h1 and h1c have one request in flight per connection, so a VU per request in flight.
//
// A target that cannot keep up shows it as dropped iterations (no VU free to start a request
// on time): that is a result — "could not sustain RATE req/s" — not an invalid run. A run whose
// connections were not kept alive (more opened than VUs) is invalid, as in the reused cells.
// make k6 and make bench run native/equal-load.js instead unless CLIENT=k6.
import { equalLoadScenario } from './lib/equalload.js';

const s = equalLoadScenario({ scenario: 'equal-load' });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
