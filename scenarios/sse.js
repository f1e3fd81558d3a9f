// sse: Server-Sent Events through the target — GET /sse?count=3&interval_ms=150, SAMPLES times
// on one warm connection over PROTO (h1, h1c, h2 or h3; default h2), timed per event by k6/x/sse
// (k6/http returns only once the body has ended, which hides buffering).
// The upstream sends the first event at once and the others 150 ms apart: a proxy that passes
// the stream through delivers the first event within a few ms; one that buffers delivers it
// with the last, ~300 ms in. The check "first event before half the stream" fails the latter.
import { check } from 'k6';
import sse from 'k6/x/sse';
import { probeTarget, protoOK } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now } from './lib/metrics.js';
import { probeOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { summarize } from './lib/summary.js';

const COUNT = 3;
const INTERVAL_MS = 150;

const cfg = loadConfig({ scenario: 'sse', mode: 'probe', route: '/sse' });
const out = planOutput(cfg);
const url = `${cfg.url}?count=${COUNT}&interval_ms=${INTERVAL_MS}`;
// name: the URL without its query, so no per-request value becomes a tag
// http3: over h3, k6/x/sse sends through the VU's k6/x/http3 connections (k6's own transport
// speaks h1 and h2 only)
const params = { tags: { route: cfg.route, name: cfg.url }, timeout: '10s', http3: cfg.proto.quic };

export const options = probeOptions(cfg, { trends: ['sse_first_event', 'sse_event_gap'] });

export function setup() {
  assertOutput(out);
  const probed = probeTarget(cfg, {
    path: `${cfg.route}?count=1&interval_ms=0`,
    params: { headers: { Accept: 'text/event-stream' } },
  });
  return { probed };
}

// ticks are the events as the upstream sends them: event "tick", data {"seq":0…,"ts":…}.
function ticks(events) {
  if (!events || events.length !== COUNT) return false;
  return events.every((e, i) => {
    try {
      return e.event === 'tick' && JSON.parse(e.data).seq === i;
    } catch (err) {
      return false;
    }
  });
}

export default function () {
  clockMs.add(now());
  const res = sse.get(url, params);
  clockMs.add(now());
  const rightProto = protoOK(res, cfg);
  check(res, {
    'status is 200': (r) => r.status === 200,
    [`${COUNT} tick events in order`]: (r) => ticks(r.events),
    'first event before half the stream (not buffered)': (r) =>
      r.first_event_ms !== null && r.first_event_ms < r.duration_ms / 2,
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  });
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    expected: cfg.samples,
    noTimings: true,
    extra: { sse_first_event: 'sse_first_event', sse_event_gap: 'sse_event_gap' },
  });
}
