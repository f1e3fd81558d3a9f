// reused-h2: steady-state throughput of HTTP/2 over TLS (ALPN h2) on kept-alive connections.
// Each VU is one connection carrying STREAMS concurrent streams: every iteration is one
// http.batch of STREAMS GET / requests, multiplexed on the VU's connection. The batch waits for
// its slowest stream before the next one starts, so in-flight streams dip between batches
// (h2load -m keeps them all busy). Every response is checked: 200, 4096 bytes, HTTP/2.0.
// The upstream's connection counter shows one TLS connection per VU (plus setup's).
import exec from 'k6/execution';
import http from 'k6/http';
import { checkRoot, requestParams } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { reusedOptions } from './lib/options.js';
import { planOutput } from './lib/output.js';
import { setupRoot } from './lib/scenario.js';
import { summarize } from './lib/summary.js';
import { lateCounter } from './lib/window.js';

const cfg = loadConfig({ scenario: 'reused-h2', mode: 'reused', proto: 'h2', route: '/' });
const out = planOutput(cfg);
const params = requestParams(cfg);
const batch = Array.from({ length: cfg.streams }, () => ['GET', cfg.url, null, params]);

const ended = lateCounter(cfg);

export const options = reusedOptions(cfg);

export function setup() {
  return setupRoot(cfg, out);
}

export default function () {
  if (exec.vu.iterationInInstance === 0) {
    // Open the VU's connection with one request first: a first batch would race STREAMS dials
    // (Go learns the connection is h2 only after ALPN), and all but one would be closed again.
    checkRoot(http.get(cfg.url, params), cfg);
  }
  for (const res of http.batch(batch)) {
    checkRoot(res, cfg);
  }
  // the batch's requests count as ending with its slowest: one that straddles the window's
  // end is left out whole (at most one batch per VU, a fraction of a percent at 10 s)
  ended(cfg.streams);
}

export function handleSummary(data) {
  return summarize(data, cfg, out);
}
