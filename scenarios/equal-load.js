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
import { checkRoot, requestParams } from './lib/checks.js';
import { client } from './lib/client.js';
import { loadConfig } from './lib/config.js';
import { equalLoadOptions, equalLoadPlan } from './lib/options.js';
import { planOutput } from './lib/output.js';
import { batchSender, setupRoot } from './lib/scenario.js';
import { summarize } from './lib/summary.js';

const cfg = loadConfig({ scenario: 'equal-load' });
const out = planOutput(cfg);
const params = requestParams(cfg);
const plan = equalLoadPlan(cfg);
const http = client(cfg);
// h2/h3: a batch of STREAMS requests per iteration, as in the reused cells
const sendBatch = cfg.proto.mux ? batchSender(cfg, http) : null;

export const options = equalLoadOptions(cfg, plan);

export function setup() {
  return setupRoot(cfg, out);
}

export default function () {
  if (sendBatch) {
    sendBatch();
  } else {
    checkRoot(http.get(cfg.url, params), cfg);
  }
}

export function handleSummary(data) {
  // the connections are held to one per VU that k6 ran, as the reused cells' are
  const vus = data.metrics.vus_max ? data.metrics.vus_max.values.max : plan.maxVUs;
  return summarize(data, cfg, out, { vus, arrival: plan });
}
