// sse: Server-Sent Events through the target — GET /sse?count=3&interval_ms=150, SAMPLES times
// on one warm connection over PROTO (h1, h1c, h2 or h3; default h2), timed per event by k6/x/proxybench/sse
// (k6/http returns only once the body has ended, which hides buffering).
// It asks as a browser's EventSource does (lib/probes.js EVENTSOURCE_HEADERS: Accept-Encoding
// included), so a proxy that compresses or holds back event streams for browsers is caught.
// The upstream sends the first event at once and each other no sooner than 150 ms after the one
// before, uncompressed. Each response must be uncompressed, its events the upstream's, byte for
// byte (below): checks. And the cell must not be held back: in more than half the responses,
// the first event later than 150 ms after the request (after the upstream sent the second), or
// two events less than 15 ms apart (released together); events decoded and timed as they came,
// if compressed; lib/probes.js says why these rules and figures. Each response's timing goes to
// probe_held_back{why} and the result's pacing block, which the verdict judges and says which
// rule and by how much. A stall (one long gap) is a figure: the result's gap max, and
// pacing.stalls.
// The bytes: the upstream frames each event as `event: tick\ndata: {"seq":N,"ts":T}\n\n`
// (lib/bodies.js sseTick), seq from 0, T its clock. k6/x/proxybench/sse hands the script the
// events it parsed and the body's byte count, not the bytes: each event must be a tick with the
// data {"seq":i,"ts":T} exactly, in order, T never going back, and the body exactly as long as
// those events framed as the upstream frames them, so that another framing (no space after a
// colon, CRLF line ends, a comment, an id or retry field) shows in the count; one contrived to
// keep the length (a space dropped, a CR added) would not. A response that is not the
// upstream's counts in bad_responses{why:body}.
// Each sample ends within SAMPLE_TIMEOUT (lib/options.js): one whose target never answers fails
// as a timeout, one that stalls mid-body as stalled (lib/probes.js failureOf), and the next starts.
'use k6 with k6/x/proxybench/sse';
import { check } from 'k6';
import { sseTick } from './lib/bodies.js';
import { probeTarget, protoOK } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { extension } from './lib/extension.js';
import { badResponses, clockMs, now } from './lib/metrics.js';
import { probeOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import {
  COMPRESSED,
  EVENTSOURCE_HEADERS,
  countCompressed,
  countFailure,
  failureOf,
  judgePacing,
  pacingOf,
  pacingThresholds,
  pacing,
  ruleReasons,
  ruleThresholds,
  streamParams,
} from './lib/probes.js';
import { summarize } from './lib/summary.js';

const sse = extension('k6/x/proxybench/sse');

const COUNT = 3;
const INTERVAL_MS = 150;
const RULE = pacing(INTERVAL_MS);
const RULES = [COMPRESSED];

const cfg = loadConfig({ scenario: 'sse', client: 'k6/x/proxybench/sse' });
const out = planOutput(cfg);
const url = `${cfg.url}?count=${COUNT}&interval_ms=${INTERVAL_MS}`;
const params = streamParams(cfg, EVENTSOURCE_HEADERS);

export const options = pacingThresholds(ruleThresholds(probeOptions(cfg, { trends: ['sse_first_event', 'sse_event_gap'] }), cfg, RULES), cfg);

export function setup() {
  assertOutput(out);
  const probed = probeTarget(cfg, {
    path: `${cfg.route}?count=1&interval_ms=0`,
    params: { headers: EVENTSOURCE_HEADERS },
  });
  return { probed };
}

const TICK_DATA = /^\{"seq":(\d+),"ts":(\d+)\}$/;

// ticks checks the events as parsed against the upstream's: COUNT ticks, seq 0, 1, … in order,
// ts never going back, nothing else in them. It returns the bytes they make framed as the
// upstream frames them, or -1 when they are not its events.
function ticks(events) {
  if (!events || events.length !== COUNT) return -1;
  let bytes = 0;
  let last = 0;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const m = e.event === 'tick' && e.id === '' ? TICK_DATA.exec(e.data) : null;
    if (!m || Number(m[1]) !== i || Number(m[2]) < last) return -1;
    last = Number(m[2]);
    bytes += sseTick(i, m[2]).length;
  }
  return bytes;
}

export default function () {
  clockMs.add(now());
  const res = sse.get(url, params);
  clockMs.add(now());
  countFailure(failureOf(res));
  const rightProto = protoOK(res, cfg);
  const encoding = countCompressed(res);
  // decoded, when it came compressed: the events the upstream sent, framed as it framed them
  const framed = res.status === 200 ? ticks(res.events) : -1;
  const sameBytes = framed >= 0 && res.bytes === framed;
  if (res.status === 200 && !sameBytes) badResponses.add(1, { why: 'body' });
  const checks = {
    'status is 200': (r) => r.status === 200,
    'not compressed (no Content-Encoding)': () => encoding === '',
    [`${COUNT} tick events in order`]: () => framed >= 0,
    'events framed as the upstream frames them': () => sameBytes,
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  };
  check(res, checks);
  // A failed response is already counted (http_req_failed), and has no timing to judge; a
  // compressed one is judged on its decoded events (lib/probes.js). The timing is not a
  // check: one response held back is what a busy machine makes too, and the verdict judges
  // the cell on them all (more than half held back), from probe_held_back.
  if (res.status === 200) judgePacing(res.events.map((e) => e.at_ms), RULE);
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    expected: cfg.samples,
    noTimings: true,
    extra: { sse_first_event: 'sse_first_event', sse_event_gap: 'sse_event_gap' },
    invalid: (d, result) => ruleReasons(d, result, cfg, RULES),
    pacing: pacingOf(data, cfg, RULE, { one: 'event', many: 'events' }),
  });
}
