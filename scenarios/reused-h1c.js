// reused-h1c: steady-state throughput of cleartext HTTP/1.1 on kept-alive connections.
// Each VU is one keep-alive connection sending GET / one request after another, for DURATION,
// after an unmeasured warm-up. Every response is checked: 200, 4096 bytes, HTTP/1.1.
import http from 'k6/http';
import { checkRoot, probeTarget, requestParams, ROOT_BYTES } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { reusedOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { summarize } from './lib/summary.js';

const cfg = loadConfig({ scenario: 'reused-h1c', mode: 'reused', proto: 'h1c', route: '/' });
const out = planOutput(cfg);
const params = requestParams(cfg);

export const options = reusedOptions(cfg);

export function setup() {
  assertOutput(out);
  return { probed: probeTarget(cfg, { expectBytes: ROOT_BYTES }) };
}

export default function () {
  checkRoot(http.get(cfg.url, params), cfg);
}

export function handleSummary(data) {
  return summarize(data, cfg, out);
}
