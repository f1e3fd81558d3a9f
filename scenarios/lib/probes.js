// How the probes ask, and the rules their answers must keep beyond status, size and protocol.
// The probes request as a browser does, so that a proxy that treats browsers differently
// (compresses for them, holds their event streams back) is measured as a browser meets it.
import { probeViolationMs, probeViolations } from './metrics.js';
import { sel } from './options.js';
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
export const PACING_WHY = ['first', 'burst', 'stall'];

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

// streamParams are the k6/x/proxybench/sse request params of the stream and sse probes.
//   name: the URL without its query, so no per-request value becomes a tag
//   http3: over h3, k6/x/proxybench/sse sends through the VU's k6/x/proxybench/http3 connections
//     (k6's own transport speaks h1 and h2 only)
export function streamParams(cfg, headers) {
  return { headers, tags: { route: cfg.route, name: cfg.url }, timeout: '10s', http3: cfg.proto.quic };
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

// The pacing rules of a streamed probe whose upstream sends one part every intervalMs, the
// first at once, with slack = max(25 ms, intervalMs / 4):
//   first: the first part is whole within slack of the request's start;
//   gaps:  each gap between consecutive parts is within intervalMs ± slack. Shorter is a burst
//          (parts held back and released together: gaps near 0), longer a stall (a part held
//          back past the next one's time).
// Why these figures: on loopback over a warm connection, a proxy that passes the stream through
// delivers the first part in a millisecond or two and keeps the upstream's cadence to about a
// millisecond (measured on 2 shared cores, direct and nginx over h1, h1c, h2, h3: first event
// and first chunk 0.2–2 ms, 4.7 ms at worst; gaps 150 ± 5 ms). A proxy that holds a part back holds it until its buffer fills, the next part
// comes or the stream ends: late by a whole interval or more. A quarter of the interval keeps
// that case four times past the limit; the 25 ms floor is several scheduler time slices on 2
// cores shared with the proxy and the upstream, so a busy machine's noise does not invalidate a
// cell, and is still only half the stream probe's 50 ms interval.
export const SLACK_FLOOR_MS = 25;

export function pacing(intervalMs) {
  const slack = Math.max(SLACK_FLOOR_MS, intervalMs / 4);
  return { intervalMs, slack, gapMin: intervalMs - slack, gapMax: intervalMs + slack };
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

// judgePacing checks one response's arrival times (ms since the request started) against rule,
// counts each rule broken, and says which held: { first, gaps }.
export function judgePacing(arrivals, rule) {
  const first = arrivals.length > 0 && arrivals[0] <= rule.slack;
  if (!first) {
    probeViolations.add(1, { why: 'first' });
    if (arrivals.length > 0) probeViolationMs.add(arrivals[0], { why: 'first' });
  }
  let shortest = Infinity;
  let longest = -Infinity;
  for (let i = 1; i < arrivals.length; i++) {
    const gap = arrivals[i] - arrivals[i - 1];
    shortest = Math.min(shortest, gap);
    longest = Math.max(longest, gap);
  }
  const burst = shortest < rule.gapMin;
  const stall = longest > rule.gapMax;
  if (burst) {
    probeViolations.add(1, { why: 'burst' });
    probeViolationMs.add(shortest, { why: 'burst' });
  }
  if (stall) {
    probeViolations.add(1, { why: 'stall' });
    probeViolationMs.add(longest, { why: 'stall' });
  }
  return { first, gaps: !burst && !stall };
}

// ruleThresholds adds to a probe's options one failing threshold per rule (a breach in the
// measured scenario fails the run: k6 exits 99), and the submetrics ruleReasons reads back.
export function ruleThresholds(options, cfg, whys) {
  const th = options.thresholds;
  for (const why of whys) {
    th[`probe_violations${sel(cfg, `,why:${why}`)}`] = ['count==0'];
    if (why === COMPRESSED) {
      for (const e of ENCODINGS) th[`probe_violations${sel(cfg, `,why:${why},encoding:${e}`)}`] = ['count>=0'];
    } else {
      th[`probe_violation_ms${sel(cfg, `,why:${why}`)}`] = ['max>=0'];
    }
  }
  return options;
}

function trendValue(data, key, stat) {
  const m = data.metrics[key];
  return m && m.values && m.values.count ? m.values[stat] : null;
}

function ms(x) {
  return `${Math.round(x * 10) / 10} ms`;
}

// ruleReasons are the result's invalid entries for the rules broken in the measured scenario
// (buildResult's spec.invalid). what names the parts: { one: 'event', many: 'events' }; rule
// is pacing()'s, or null for a probe without pacing rules (json).
export function ruleReasons(data, result, cfg, whys, what = {}, rule = null) {
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
  if (!rule) return reasons;
  const figure = (why, stat) => trendValue(data, `probe_violation_ms${sel(cfg, `,why:${why}`)}`, stat);
  const gaps = `want each gap between ${what.many} within ${ms(rule.gapMin)}–${ms(rule.gapMax)} (the upstream's ${
    rule.intervalMs
  } ms ± ${ms(rule.slack)})`;
  if (whys.includes('first') && n('first') > 0) {
    const worst = figure('first', 'max');
    const timed = figure('first', 'count') || 0; // the others had no whole part at all
    let got = 'none';
    if (worst !== null) got = `up to ${ms(worst)}${timed < n('first') ? ', or none' : ''}`;
    reasons.push(
      `first ${what.one} late in ${n('first')} ${of}: want it within ${ms(rule.slack)} of the request ` +
        `(max(${SLACK_FLOOR_MS} ms, a quarter of the ${rule.intervalMs} ms interval)), got ${got}`,
    );
  }
  if (whys.includes('burst') && n('burst') > 0) {
    reasons.push(`${what.many} in bursts in ${n('burst')} ${of}: ${gaps}, got one of ${ms(figure('burst', 'min'))}`);
  }
  if (whys.includes('stall') && n('stall') > 0) {
    reasons.push(`${what.many} held back in ${n('stall')} ${of}: ${gaps}, got one of ${ms(figure('stall', 'max'))}`);
  }
  return reasons;
}
