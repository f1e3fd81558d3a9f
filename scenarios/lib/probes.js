// How the probes ask, and the rules their answers must keep beyond status, size and protocol.
// The probes request as a browser does, so that a proxy that treats browsers differently
// (compresses for them, holds their event streams back) is measured as a browser meets it.
import { probeStalls, probeViolationMs, probeViolations } from './metrics.js';
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
export const PACING_WHY = ['first', 'burst'];

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

// The pacing rules of a streamed probe whose upstream sends the first part at once and each
// next one no sooner than intervalMs after the one before (upstream/pace.go). They are shaped
// like the fault they detect: a proxy that holds parts back releases them together, when its
// buffer fills, the next part comes or the stream ends. So a response is held back when
//   first: its first part came later than intervalMs after the request: the proxy still had it
//          when the upstream sent the next;
//   burst: two parts came less than `together` apart (max(TOGETHER_FLOOR_MS, intervalMs / 10)):
//          closer than the upstream ever sends them, so one was held and released with the other.
// A long gap alone (a stall) is the machine's noise as often as the proxy's: a client or an
// upstream descheduled for a while delays one part and the rest keep the beat, and the upstream
// never catches up by sending sooner. It is a figure (the longest gap, `gap max` in the tables,
// flagged when the run saw outside load), never a verdict. Why these figures: on loopback over a
// warm connection a proxy that passes the stream through delivers the first part in a
// millisecond or two and keeps the upstream's cadence to about a millisecond (direct and nginx
// over h1, h1c, h2, h3 on 2 shared cores: first part 0.2–2 ms, 4.7 ms at worst; gaps 150 ± 5 ms),
// while parts a proxy releases together come in one read or a few microseconds apart. For noise
// to look like either, the client would have to be descheduled for nine tenths of an interval
// (45 ms for the stream probe, 135 ms for sse) or a whole one before the first part, many
// scheduler time slices even on 2 cores with a CPU burner beside the run (its figures:
// scenarios/README.md).
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

// probeCounters are the counter submetrics a paced probe keeps for its result (probeOptions).
export function probeCounters(cfg) {
  return [`probe_stalls${sel(cfg)}`];
}

// pacingOf is the result's pacing block (summarize's spec.pacing): the rule's figures, and the
// responses that stalled.
export function pacingOf(data, cfg, rule) {
  return {
    interval_ms: rule.intervalMs,
    together_ms: rule.together,
    stall_over_ms: rule.stallOver,
    stalls: count(data, `probe_stalls${sel(cfg)}`),
  };
}

// judgePacing checks one response's arrival times (ms since the request started) against rule,
// counts each rule broken (probe_violations) and each stall (probe_stalls), adds every gap to
// gapTrend when one is given (the sse extension adds its own), and says what held:
// { first, together, gapMax } (gapMax: the longest gap, or null with fewer than two parts).
export function judgePacing(arrivals, rule, gapTrend = null) {
  const first = arrivals.length > 0 && arrivals[0] <= rule.intervalMs;
  if (!first) {
    probeViolations.add(1, { why: 'first' });
    if (arrivals.length > 0) probeViolationMs.add(arrivals[0], { why: 'first' });
  }
  let shortest = Infinity;
  let longest = null;
  for (let i = 1; i < arrivals.length; i++) {
    const gap = arrivals[i] - arrivals[i - 1];
    if (gapTrend) gapTrend.add(gap);
    shortest = Math.min(shortest, gap);
    longest = Math.max(longest === null ? gap : longest, gap);
  }
  const together = shortest >= rule.together;
  if (!together) {
    probeViolations.add(1, { why: 'burst' });
    probeViolationMs.add(shortest, { why: 'burst' });
  }
  if (longest !== null && longest > rule.stallOver) probeStalls.add(1);
  return { first, together, gapMax: longest };
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
  if (whys.includes('first') && n('first') > 0) {
    const worst = figure('first', 'max');
    const timed = figure('first', 'count') || 0; // the others had no whole part at all
    let got = 'none';
    if (worst !== null) got = `up to ${ms(worst)}${timed < n('first') ? ', or none' : ''}`;
    reasons.push(
      `first ${what.one} held back in ${n('first')} ${of}: want it before the upstream sends the next, ` +
        `${rule.intervalMs} ms after the request; got ${got}`,
    );
  }
  if (whys.includes('burst') && n('burst') > 0) {
    reasons.push(
      `${what.many} released together in ${n('burst')} ${of}: two came ${ms(figure('burst', 'min'))} apart, ` +
        `want at least ${ms(rule.together)} (the upstream sends them ${rule.intervalMs} ms apart or more)`,
    );
  }
  return reasons;
}
