// How the probes ask, and the rules their answers must keep beyond status, size and protocol.
// The probes request as a browser does, so that a proxy that treats browsers differently
// (compresses for them, holds their event streams back) is measured as a browser meets it.
import { probeFailures, probeHeldBack, probeStalls, probeViolationMs, probeViolations } from './metrics.js';
import { SAMPLE_TIMEOUT, sel } from './options.js';
import { count } from './summary.js';

// What Chrome sends as Accept-Encoding on every request, EventSource and fetch alike.
export const ACCEPT_ENCODING = 'gzip, deflate, br, zstd';

// What `new EventSource(url)` sends (the HTML standard's "server-sent events": Accept and
// Cache-Control), with the browser's Accept-Encoding.
export const EVENTSOURCE_HEADERS = {
  Accept: 'text/event-stream',
  'Cache-Control': 'no-cache',
  'Accept-Encoding': ACCEPT_ENCODING,
};

// What `fetch(url)` sends by default.
export const FETCH_HEADERS = { Accept: '*/*', 'Accept-Encoding': ACCEPT_ENCODING };

// Why a probe's response broke a rule: the why tag of probe_violations and probe_violation_ms.
export const COMPRESSED = 'compressed';

// The encoding tag of probe_violations{why:compressed}: the codings a browser accepts, and
// "other" for anything else (a list, an unknown coding), so the tag stays low-cardinality.
const ENCODINGS = ['gzip', 'deflate', 'br', 'zstd', 'other'];

// A Content-Encoding on a probe's response makes the run invalid, and the body is still decoded
// and judged like any other. Invalid: the upstream never compresses, so the proxy did, and every
// proxy of the suite is meant to pass bodies through untouched; one that compresses does other
// work than the rest, so its figures would not compare. Still judged: k6/http decodes json's
// body, and k6/x/proxybench/sse decodes the streams as they come (each event timed when the compressed bytes
// that carried it arrived), so the size checks and the timing rules apply to what a browser
// would get. The result then says both that the proxy compressed and whether it held the stream
// back, which compressing proxies tend to do: nginx's gzip, with proxy_buffering on, sends
// nothing, headers included, until the stream has ended.

// k6's error codes (k6 docs, "Error codes"): a request's timeout, a dial's, a refused dial, the
// TCP range and the TLS range.
const REQUEST_TIMEOUT = 1050;
const DIAL_TIMEOUT = 1211;
const DIAL_REFUSED = 1212;

// failureOf is why a k6/http, k6/x/proxybench/http3 or k6/x/proxybench/sse response failed, one
// of options.js FAILURE_WHY (timeout, stalled, refused, reset, tls, other), or '' when it did not.
// A timed-out response whose head had come stalled: k6 gives it no status then, but its
// timings.receiving runs from the first byte (k6/http, k6/x/proxybench/http3), and
// k6/x/proxybench/sse gives first_byte_ms.
export function failureOf(res) {
  const code = res.error_code || 0;
  if (!code && !res.error) return '';
  if (code === REQUEST_TIMEOUT || code === DIAL_TIMEOUT) {
    const headCame =
      res.status > 0 ||
      (res.first_byte_ms !== undefined && res.first_byte_ms !== null) ||
      (res.timings !== undefined && res.timings.receiving > 0);
    return headCame ? 'stalled' : 'timeout';
  }
  if (code === DIAL_REFUSED) return 'refused';
  if (code >= 1300 && code < 1400) return 'tls';
  if (code >= 1200 && code < 1300) return 'reset';
  return 'other';
}

// countFailure counts a failed sample by why (one of FAILURE_WHY; '' counts nothing) and returns it.
export function countFailure(why) {
  if (why) probeFailures.add(1, { why });
  return why;
}

// streamParams are the k6/x/proxybench/sse request params of the stream and sse probes.
//   name: the URL without its query, so no per-request value becomes a tag
//   http3: over h3, k6/x/proxybench/sse sends through the VU's k6/x/proxybench/http3 connections
//     (k6's own transport speaks h1 and h2 only)
export function streamParams(cfg, headers) {
  return { headers, tags: { route: cfg.route, name: cfg.url }, timeout: SAMPLE_TIMEOUT, http3: cfg.proto.quic };
}

// contentEncoding is the response's Content-Encoding, lower-cased; '' for none or identity.
export function contentEncoding(res) {
  const headers = res.headers || {};
  for (const k of Object.keys(headers)) {
    if (k.toLowerCase() === 'content-encoding') {
      const v = String(headers[k]).trim().toLowerCase();
      return v === 'identity' ? '' : v;
    }
  }
  return '';
}

// countCompressed counts a compressed response and returns its encoding ('' when none).
export function countCompressed(res) {
  const enc = contentEncoding(res);
  if (enc) {
    probeViolations.add(1, { why: COMPRESSED, encoding: ENCODINGS.includes(enc) ? enc : 'other' });
  }
  return enc;
}

// The pacing rules of a streamed probe whose upstream sends the first part at once and each
// next one no sooner than intervalMs after the one before (extensions/upstream/pace.go). They
// are shaped like the fault they detect: a proxy that holds parts back releases them together,
// when its buffer fills, the next part comes or the stream ends. A response is held back when
//   first: its first part came later than intervalMs after the request: the proxy still had it
//          when the upstream sent the next;
//   burst: two parts came less than `together` apart (max(TOGETHER_FLOOR_MS, intervalMs / 10)):
//          closer than the upstream ever sends them, so one was held and released with the other.
// A cell is held back, and invalid, when more than half its responses were (for either rule):
// buffering is a proxy's setting, and holds back every response the same way; a client
// descheduled for a while holds back the one it was reading (parts wait in its socket and are
// read together), which a busy machine does, now and then (a 325 ms stall of k6 beside a CPU
// burner and a full test run here). Fewer than that is a figure, said beside the cell.
// A long gap alone (a stall) is never a verdict: a client or an upstream descheduled for a
// while delays one part and the rest keep the beat, and the upstream never catches up by
// sending sooner. It is a figure (the longest gap, `gap max` in the tables, flagged when the
// run saw outside load). Why these figures: on loopback over a warm connection a proxy that
// passes the stream through delivers the first part in a millisecond or two and keeps the
// upstream's cadence to about a millisecond (direct and nginx over h1, h1c, h2, h3 on 2 shared
// cores: first part 0.2–2 ms, 4.7 ms at worst; gaps 150 ± 5 ms), while parts a proxy releases
// together come in one read or a few microseconds apart.
export const TOGETHER_FLOOR_MS = 2;

// A gap longer than the interval by more than max(STALL_FLOOR_MS, intervalMs / 4) is a stall:
// counted (probe_stalls) and shown, not judged.
export const STALL_FLOOR_MS = 25;

export function pacing(intervalMs) {
  return {
    intervalMs,
    together: Math.max(TOGETHER_FLOOR_MS, intervalMs / 10),
    stallOver: intervalMs + Math.max(STALL_FLOOR_MS, intervalMs / 4),
  };
}

// chunkArrivals turns k6/x/proxybench/sse's reads (chunks_ms, chunks_bytes) into the time each of the
// upstream's chunkBytes-byte chunks was whole: however a proxy splits or merges them into
// reads, a chunk has arrived when its last byte has.
export function chunkArrivals(res, chunkBytes) {
  const times = res.chunks_ms || [];
  const sizes = res.chunks_bytes || [];
  const at = [];
  let got = 0;
  for (let i = 0; i < times.length; i++) {
    got += sizes[i] || 0;
    while (got >= (at.length + 1) * chunkBytes) at.push(times[i]);
  }
  return at;
}

// pacingThresholds adds to a paced probe's options its rules' thresholds (for a stock k6: a
// cell held back fails the run, k6 exits 99) and the submetrics pacingOf reads back.
export function pacingThresholds(options, cfg) {
  const th = options.thresholds;
  for (const why of ['first', 'burst']) {
    th[`probe_held_back${sel(cfg, `,why:${why}`)}`] = ['rate<=0.5'];
    th[`probe_violation_ms${sel(cfg, `,why:${why}`)}`] = ['max>=0'];
  }
  th[`probe_stalls${sel(cfg)}`] = ['count>=0'];
  return options;
}

// pacingOf is the result's pacing block (summarize's spec.pacing), which the verdict judges:
// the rule's figures, the responses judged, those held back by each rule with the figure
// behind them, and those that stalled. what names the parts: { one: 'event', many: 'events' }.
export function pacingOf(data, cfg, rule, what) {
  const held = (why) => {
    const m = data.metrics[`probe_held_back${sel(cfg, `,why:${why}`)}`];
    return m && m.values ? { judged: m.values.passes + m.values.fails, held: m.values.passes } : { judged: 0, held: 0 };
  };
  const figure = (why, stat) => trendValue(data, `probe_violation_ms${sel(cfg, `,why:${why}`)}`, stat);
  return {
    part: what.one,
    parts: what.many,
    interval_ms: rule.intervalMs,
    together_ms: rule.together,
    stall_over_ms: rule.stallOver,
    responses: held('first').judged,
    first_held: held('first').held,
    first_max_ms: figure('first', 'max'),
    together_held: held('burst').held,
    together_min_ms: figure('burst', 'min'),
    stalls: count(data, `probe_stalls${sel(cfg)}`),
  };
}

// judgePacing checks one response's arrival times (ms since the request started) against rule,
// adds whether each rule held back the response (probe_held_back), counts a stall
// (probe_stalls), adds every gap to
// gapTrend when one is given (the sse extension adds its own), and says what held:
// { first, together, gapMax } (gapMax: the longest gap, or null with fewer than two parts).
export function judgePacing(arrivals, rule, gapTrend = null) {
  const first = arrivals.length > 0 && arrivals[0] <= rule.intervalMs;
  probeHeldBack.add(!first, { why: 'first' });
  if (!first && arrivals.length > 0) probeViolationMs.add(arrivals[0], { why: 'first' });
  let shortest = Infinity;
  let longest = null;
  for (let i = 1; i < arrivals.length; i++) {
    const gap = arrivals[i] - arrivals[i - 1];
    if (gapTrend) gapTrend.add(gap);
    shortest = Math.min(shortest, gap);
    longest = Math.max(longest === null ? gap : longest, gap);
  }
  const together = shortest >= rule.together;
  probeHeldBack.add(!together, { why: 'burst' });
  if (!together) probeViolationMs.add(shortest, { why: 'burst' });
  if (longest !== null && longest > rule.stallOver) probeStalls.add(1);
  return { first, together, gapMax: longest };
}

// ruleThresholds adds to a probe's options one failing threshold per rule of whys (compressed:
// a breach in the measured scenario fails the run, k6 exits 99), and the submetrics
// ruleReasons reads back.
export function ruleThresholds(options, cfg, whys) {
  const th = options.thresholds;
  for (const why of whys) {
    th[`probe_violations${sel(cfg, `,why:${why}`)}`] = ['count==0'];
    for (const e of ENCODINGS) th[`probe_violations${sel(cfg, `,why:${why},encoding:${e}`)}`] = ['count>=0'];
  }
  return options;
}

function trendValue(data, key, stat) {
  const m = data.metrics[key];
  return m && m.values && m.values.count ? m.values[stat] : null;
}

// ruleReasons are the result's invalid entries for the rules of whys broken in the measured
// scenario (buildResult's spec.invalid). The pacing rules are the verdict's (pacingOf).
export function ruleReasons(data, result, cfg, whys) {
  const reasons = [];
  const of = `of ${result.requests} responses`;
  const n = (why, more = '') => count(data, `probe_violations${sel(cfg, `,why:${why}${more}`)}`);
  if (whys.includes(COMPRESSED) && n(COMPRESSED) > 0) {
    for (const e of ENCODINGS) {
      const k = n(COMPRESSED, `,encoding:${e}`);
      if (k === 0) continue;
      const coding = e === 'other' ? `other than ${ENCODINGS.slice(0, -1).join(', ')}` : e;
      reasons.push(
        `compressed by the proxy: Content-Encoding ${coding} in ${k} ${of} ` +
          `(the upstream never compresses; the probe accepts ${ACCEPT_ENCODING}, as Chrome does)`,
      );
    }
  }
  return reasons;
}
