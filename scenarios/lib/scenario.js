// The one-request-per-iteration scenarios (reused-h1, reused-h1c and every fresh-*) differ only
// in their name, protocol, pattern and client: rootScenario builds one, and each script stays a
// file of its own (one per protocol × pattern) that says what it measures.
import { checkRoot, probeTarget, requestParams, ROOT_BYTES } from './checks.js';
import { loadConfig } from './config.js';
import { clockMs, now } from './metrics.js';
import { freshOptions, reusedOptions } from './options.js';
import { assertOutput, planOutput } from './output.js';
import { summarize } from './summary.js';
import { lateCounter } from './window.js';

// setupRoot is the setup() of every GET / scenario: the result can be written, and one probe
// request proves the target up, on the right protocol, with the upstream's 4096-byte body.
export function setupRoot(cfg, out) {
  assertOutput(out);
  return { probed: probeTarget(cfg, { expectBytes: ROOT_BYTES }) };
}

// rootScenario: GET / once per iteration with client (k6/http or k6/x/proxybench/http3), every response
// checked. mode 'reused' keeps each VU's connection; mode 'fresh' opens one per request and
// proves it (new_connections == requests, rps over first request start → last response end).
export function rootScenario({ scenario, mode, proto, client }) {
  const cfg = loadConfig({ scenario, mode, proto, route: '/' });
  const out = planOutput(cfg);
  const params = requestParams(cfg);
  const fresh = mode === 'fresh';
  const ended = fresh ? null : lateCounter(cfg);
  return {
    options: fresh ? freshOptions(cfg) : reusedOptions(cfg),
    setup: () => setupRoot(cfg, out),
    iteration() {
      if (fresh) clockMs.add(now());
      checkRoot(client.get(cfg.url, params), cfg);
      if (fresh) clockMs.add(now());
      else ended(1);
    },
    handleSummary(data) {
      if (!fresh) return summarize(data, cfg, out);
      return summarize(data, cfg, out, {
        expected: cfg.requests,
        extra: {
          http_req_connecting: 'http_req_connecting',
          http_req_tls_handshaking: 'http_req_tls_handshaking',
        },
      });
    },
  };
}
