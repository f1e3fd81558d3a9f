// fresh-h3: every request on a brand-new connection — HTTP/3: a new UDP socket, a full QUIC
// handshake (TLS 1.3 inside QUIC, no 0-RTT, no resumption), one request, then the connection is
// closed (H3_NO_ERROR), through k6/x/http3 with noConnectionReuse.
// REQUESTS iterations shared by FRESH_CONNECTIONS VUs. It is proved, not assumed: a request
// counts in new_connections only if k6/x/http3 timed a QUIC handshake for it
// (timings.tls_handshaking > 0; connecting is the socket's opening, a few µs), and the run is
// valid only if new_connections == requests. rps = requests / (first request start → last
// response end).
//
// quic-go servers (direct, Caddy) queue at most 32 completed handshakes for their accept loop
// and refuse the others with CONNECTION_REFUSED (error_code 1212): with FRESH_CONNECTIONS above
// 32 such refusals are the server's limit, not the client's. The smoke profile opens 32 at a
// time; stable (64) and stress (100) can hit it on a busy machine.
import http3 from 'k6/x/http3';
import { checkRoot, probeTarget, requestParams, ROOT_BYTES } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now } from './lib/metrics.js';
import { freshOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { summarize } from './lib/summary.js';

const cfg = loadConfig({ scenario: 'fresh-h3', mode: 'fresh', proto: 'h3', route: '/' });
const out = planOutput(cfg);
const params = requestParams(cfg);

export const options = freshOptions(cfg);

export function setup() {
  assertOutput(out);
  return { probed: probeTarget(cfg, { expectBytes: ROOT_BYTES }) };
}

export default function () {
  clockMs.add(now());
  checkRoot(http3.get(cfg.url, params), cfg);
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
