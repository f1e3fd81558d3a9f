// The GET / scenarios differ only in their name (which gives their protocol and pattern through
// the catalogue) and client: rootScenario builds the one-request-per-iteration ones (reused-h1,
// reused-h1c, every fresh-*), batchScenario the multiplexed reused-h2 and reused-h3. Each script
// stays a file of its own that says what it measures.
import exec from 'k6/execution';
import { checkRoot, probeTarget, requestParams, ROOT_BYTES } from './checks.js';
import { loadConfig } from './config.js';
import { clockMs, connTTFB, now } from './metrics.js';
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

// FRESH_EXTRA are the trends a fresh result gives beside its latency: the handshakes, and the
// new connection to the first byte.
export const FRESH_EXTRA = {
  http_req_connecting: 'http_req_connecting',
  http_req_tls_handshaking: 'http_req_tls_handshaking',
  conn_ttfb: 'conn_ttfb',
};

// rootScenario: GET / once per iteration with client (k6/http or k6/x/proxybench/http3), every response
// checked. mode 'reused' keeps each VU's connection; mode 'fresh' opens one per request and
// proves it (new_connections == requests, rps over first request start → last response end).
export function rootScenario({ scenario, client }) {
  const cfg = loadConfig({ scenario });
  const out = planOutput(cfg);
  const params = requestParams(cfg);
  const fresh = cfg.mode === 'fresh';
  const ended = fresh ? null : lateCounter(cfg);
  return {
    options: fresh ? freshOptions(cfg) : reusedOptions(cfg),
    setup: () => setupRoot(cfg, out),
    iteration() {
      if (!fresh) {
        checkRoot(client.get(cfg.url, params), cfg);
        ended(1);
        return;
      }
      clockMs.add(now());
      const res = client.get(cfg.url, params);
      checkRoot(res, cfg);
      if (res.status) {
        const t = res.timings;
        connTTFB.add(t.connecting + t.tls_handshaking + t.sending + t.waiting);
      }
      clockMs.add(now());
    },
    handleSummary(data) {
      if (!fresh) return summarize(data, cfg, out);
      return summarize(data, cfg, out, {
        expected: cfg.requests,
        extra: FRESH_EXTRA,
      });
    },
  };
}

// batchSender returns what one iteration of a multiplexed VU does: one batch of STREAMS GET /
// requests through client (k6/http or k6/x/proxybench/http3) on the VU's connection, every
// response checked. The batch waits for its slowest stream before the next starts, so in-flight
// streams dip between batches (h2load -m keeps them all busy).
export function batchSender(cfg, client) {
  const params = requestParams(cfg);
  const batch = Array.from({ length: cfg.streams }, () => ['GET', cfg.url, null, params]);
  // Over TCP a first batch would race STREAMS dials (Go learns the connection is h2 only after
  // ALPN) and all but one would be closed again, so one request opens the connection first.
  // quic-go dials once per authority and the batch's other requests wait for that handshake.
  const openFirst = !cfg.proto.quic;
  return () => {
    if (openFirst && exec.vu.iterationInInstance === 0) {
      checkRoot(client.get(cfg.url, params), cfg);
    }
    for (const res of client.batch(batch)) {
      checkRoot(res, cfg);
    }
  };
}

// batchScenario: reused-h2 and reused-h3, each VU one connection carrying STREAMS concurrent
// streams (batchSender).
export function batchScenario({ scenario, client }) {
  const cfg = loadConfig({ scenario });
  const out = planOutput(cfg);
  const send = batchSender(cfg, client);
  const ended = lateCounter(cfg);
  return {
    options: reusedOptions(cfg),
    setup: () => setupRoot(cfg, out),
    iteration() {
      send();
      // the batch's requests count as ending with its slowest: one that straddles the window's
      // end is left out whole (at most one batch per VU, a fraction of a percent at 10 s)
      ended(cfg.streams);
    },
    handleSummary: (data) => summarize(data, cfg, out),
  };
}
