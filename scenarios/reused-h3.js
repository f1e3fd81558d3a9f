// reused-h3: steady-state throughput of HTTP/3 (QUIC) on kept-alive connections, through
// k6/x/proxybench/http3 (our HTTP/3 client: k6/http has none) to the target's TLS port number over UDP.
// Each VU is one QUIC connection carrying STREAMS concurrent streams: every iteration is one
// http3.batch of STREAMS GET / requests, multiplexed on the VU's connection (batch and
// batchPerHost are set to STREAMS, as for reused-h2). The batch waits for its slowest stream
// before the next one starts, so in-flight streams dip between batches, as in reused-h2.
// Every response is checked: 200, 4096 bytes, HTTP/3.0. The upstream's /debug/conns h3 counter
// shows one QUIC connection per VU (plus setup's).
//
// No single request opens the connection first (reused-h2 needs one): quic-go's transport
// dials once per authority and the batch's other requests wait for that handshake
// (http_req_blocked), so the first batch already shares one connection.
'use k6 with k6/x/proxybench/http3';
import { checkRoot, requestParams } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { extension } from './lib/extension.js';
import { reusedOptions } from './lib/options.js';
import { planOutput } from './lib/output.js';
import { setupRoot } from './lib/scenario.js';
import { summarize } from './lib/summary.js';
import { lateCounter } from './lib/window.js';

const http3 = extension('k6/x/proxybench/http3');
const cfg = loadConfig({ scenario: 'reused-h3', mode: 'reused', proto: 'h3', route: '/' });
const out = planOutput(cfg);
const params = requestParams(cfg);
const batch = Array.from({ length: cfg.streams }, () => ['GET', cfg.url, null, params]);

const ended = lateCounter(cfg);

export const options = reusedOptions(cfg);

export function setup() {
  return setupRoot(cfg, out);
}

export default function () {
  for (const res of http3.batch(batch)) {
    checkRoot(res, cfg);
  }
  // the batch's requests count as ending with its slowest: one that straddles the window's
  // end is left out whole (at most one batch per VU, a fraction of a percent at 10 s)
  ended(cfg.streams);
}

export function handleSummary(data) {
  return summarize(data, cfg, out);
}
