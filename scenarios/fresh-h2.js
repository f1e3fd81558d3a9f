// fresh-h2: every request on a brand-new connection — HTTP/2 over TLS: TCP connect, full TLS
// handshake (ALPN h2), one request.
// REQUESTS iterations shared by FRESH_CONNECTIONS VUs, keep-alive off (noConnectionReuse,
// noVUConnectionReuse). It is proved, not assumed: a request counts in new_connections only if
// k6 timed a TCP connect and a TLS handshake for it, and the run is valid only if
// new_connections == requests. rps = requests / (first request start → last response end).
import http from 'k6/http';
import { checkRoot, probeTarget, requestParams, ROOT_BYTES } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now } from './lib/metrics.js';
import { freshOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { summarize } from './lib/summary.js';

const cfg = loadConfig({ scenario: 'fresh-h2', mode: 'fresh', proto: 'h2', route: '/' });
const out = planOutput(cfg);
const params = requestParams(cfg);

export const options = freshOptions(cfg);

export function setup() {
  assertOutput(out);
  return { probed: probeTarget(cfg, { expectBytes: ROOT_BYTES }) };
}

export default function () {
  clockMs.add(now());
  checkRoot(http.get(cfg.url, params), cfg);
  clockMs.add(now());
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    expected: cfg.requests,
    extra: {
      http_req_connecting: 'http_req_connecting',
      http_req_tls_handshaking: 'http_req_tls_handshaking',
    },
  });
}
