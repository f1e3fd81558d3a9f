// handleSummary → the result JSON of CONTRIBUTING.md ("Scenario ↔ runner") and a short text
// summary on stdout. Only the measured scenario counts: every figure comes from a submetric
// selected by {scenario:<name>} (warm-up and setup() are left out).
import exec from 'k6/execution';
import { ROOT_BYTES } from './checks.js';
import {
  BAD_WHY,
  FAILURE_WHY,
  LOST_WHY,
  PROTO_TAGS,
  SAMPLE_TIMEOUT_MS,
  closedModel,
  reuseAllowed,
  sel,
  totalsThresholds,
} from './options.js';
import { outputPath } from './output.js';
import { formatText } from './text.js';

// The result file's version: result.schema.json's, the one place it is written (the Go side
// reads it there too, internal/result).
export const SCHEMA = JSON.parse(open('../result.schema.json')).properties.schema.const;

function metric(data, key) {
  return data.metrics[key];
}

// count is a counter's count in the summary data, 0 when it has no samples.
export function count(data, key) {
  const m = metric(data, key);
  return m && m.values && typeof m.values.count === 'number' ? m.values.count : 0;
}

function round(x, digits = 3) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

// stats are a trend's figures in milliseconds, or null when it has no samples.
export function stats(data, key) {
  const m = metric(data, key);
  if (!m || !m.values || !m.values.count) {
    return null;
  }
  const v = m.values;
  return {
    avg: round(v.avg),
    min: round(v.min),
    p50: round(v.med),
    p90: round(v['p(90)']),
    p95: round(v['p(95)']),
    p99: round(v['p(99)']),
    // only where the script asked k6 for it (equal-load's summaryTrendStats)
    ...(v['p(99.9)'] === undefined ? {} : { p999: round(v['p(99.9)']) }),
    max: round(v.max),
  };
}

// window is the measured span in seconds, from the clock_ms gauge (first iteration start to
// last iteration end), or null when the scenario did not record it.
function window(data, cfg) {
  const m = metric(data, `clock_ms${sel(cfg)}`);
  if (!m || !m.values || m.values.max === undefined || m.values.max <= m.values.min) {
    return null;
  }
  return (m.values.max - m.values.min) / 1000;
}

// failedThresholds lists the failed thresholds, but those named in skip.
function failedThresholds(data, skip = []) {
  const out = [];
  for (const [name, m] of Object.entries(data.metrics)) {
    if (skip.includes(name)) continue;
    for (const [expr, t] of Object.entries(m.thresholds || {})) {
      if (!t.ok) out.push(`${name}: ${expr}`);
    }
  }
  return out;
}

function failedCheckNames(group, out = []) {
  for (const c of group.checks || []) {
    if (c.fails > 0) out.push(c.name);
  }
  for (const g of group.groups || []) failedCheckNames(g, out);
  return out;
}

// buildResult computes the result object. spec:
//   ws: true for the WebSocket probe (sessions, not HTTP requests)
//   latency, ttfb: trend names for latency_ms and ttfb_ms (default http_req_duration/_waiting)
//   extra: { key: trend name } → extra[key] (selected on the measured scenario)
//   expected: how many requests (or sessions) the run must complete, if fixed
//   atLeast: expected is a floor, not the count (the native fresh loop goes on past it until
//     FRESH_DURATION has passed)
//   iterations: how many iterations it must run, when not one per expected request (the native
//     fresh loop: one per VU)
//   bodyBytes: the size of the body its checks compare byte for byte (default: /'s)
//   body: the body-size sweep's { direction, bytes } (lib/bodysizes.js), written as result.body
//     with its MB/s
//   noTimings: the responses have no k6/http timings, so no new_connections
//   invalid(data, result): a probe's own rules broken, in words (counts.findings), or []
//   vus: the VUs of a run that keeps one connection per VU (default: CONNECTIONS for reused,
//     none for the others), held to the plan's connection bound
//   arrival: equal-load's equalLoadPlan (options.js): its rate and VU pool
//   pacing: a paced probe's pacing block (lib/probes.js pacingOf), as it is
//   held: the native loop counted the connections it held at the end (connections_held) and
//     those lost (connections_lost{why})
//   inFlight: the most requests in flight at once, when the mode does not say (idle: the trickle)
//   idle: the idle scenario's plan and windows (lib/idle.js), written as the result's idle
export function buildResult(data, cfg, spec = {}) {
  const s = sel(cfg);
  const seg = segmentOf();
  const tags = (exec.test.options && exec.test.options.tags) || {};
  const testid = tags.testid || cfg.testid;

  const requests = spec.ws ? count(data, `ws_sessions${s}`) : count(data, `http_reqs${s}`);
  const checks = metric(data, `checks${s}`);
  const passes = checks ? checks.values.passes : 0;
  const fails = checks ? checks.values.fails : 0;
  const failedReq = metric(data, `http_req_failed${s}`);
  let failedRequests = failedReq ? failedReq.values.passes : 0;
  // equal-load's dropped iterations are its result, in the measured window (options.js)
  const openModel = cfg.mode === 'equal-load';
  const droppedAll = count(data, 'dropped_iterations');
  const dropped = openModel ? count(data, `dropped_iterations${s}`) : droppedAll;

  const protosSeen = {};
  if (spec.ws) {
    // k6/x/proxybench/ws reports no protocol; a 101 Switching Protocols exists only in HTTP/1.1
    // (it offers nothing else by ALPN for a WebSocket), so every 101 is an HTTP/1.1 response.
    const upgraded = count(data, `ws_sessions${sel(cfg, ',status:101')}`);
    if (upgraded > 0) protosSeen['HTTP/1.1'] = upgraded;
    failedRequests = requests - upgraded; // ws_sessions counts every attempt
  } else {
    let seen = 0;
    for (const p of PROTO_TAGS) {
      const n = count(data, `http_reqs${sel(cfg, `,proto:${p}`)}`);
      if (n > 0) protosSeen[p] = n;
      seen += n;
    }
    if (requests > seen) protosSeen.none = requests - seen; // failed before any response
  }

  let durationS;
  let durationFrom;
  let counted = requests;
  let late;
  if (closedModel(cfg)) {
    // constant-vus starts iterations for exactly DURATION; the requests that completed in it
    // are counted, not those answered in the graceful stop after it (window.js)
    late = count(data, `late_requests${s}`);
    counted = requests - late;
    durationS = cfg.durationS;
    durationFrom = 'DURATION (requests completed after it left out)';
  } else if (openModel) {
    // arrivals are scheduled over exactly DURATION
    durationS = cfg.durationS;
    durationFrom = 'DURATION';
  } else {
    durationS = window(data, cfg);
    durationFrom = 'first iteration start to last iteration end';
  }
  const rps = cfg.mode !== 'probe' && durationS ? round(counted / durationS, 1) : null;

  // counted from k6/http timings; k6/x/proxybench/ws and k6/x/proxybench/sse results carry none
  const newConns = spec.ws || spec.noTimings ? undefined : count(data, `new_connections${s}`);

  const result = {
    schema: SCHEMA,
    testid,
    scenario: cfg.scenario,
    target: cfg.target.name,
    mode: cfg.mode,
    proto: cfg.proto.name,
    client: cfg.client,
    expected_proto: cfg.proto.expected,
    route: cfg.route,
    url: cfg.url.split('?')[0],
    profile: cfg.profile,
    duration_s: durationS === null ? null : round(durationS, 3),
    duration_from: durationFrom,
    requests,
    late_requests: late,
    rps,
    failed_requests: failedRequests,
    checks: { passes, fails },
    protos_seen: protosSeen,
    dropped_iterations: dropped,
    new_connections: newConns,
    latency_ms: stats(data, `${spec.latency || 'http_req_duration'}${s}`),
    ttfb_ms: stats(data, `${spec.ttfb || 'http_req_waiting'}${s}`),
    extra: {},
    config: configOf(cfg, spec),
  };
  for (const [key, trend] of Object.entries(spec.extra || {})) {
    const st = stats(data, `${trend}${s}`);
    if (st) result.extra[key] = st;
  }
  if (spec.pacing) result.pacing = spec.pacing;
  if (spec.idle) result.idle = idleOf(spec.idle);

  if (openModel && spec.arrival.native) {
    // the native open model (lib/equalload.js): a queue shows as requests due on a busy
    // connection, and the client's own lateness as start_lag
    const behind = count(data, `behind_schedule${s}`);
    result.behind_schedule = behind;
    const lag = stats(data, `start_lag${s}`);
    if (lag) result.extra.start_lag = lag;
  } else if (openModel && droppedAll > dropped) {
    result.warmup_dropped_iterations = droppedAll - dropped;
  }
  if (spec.body) {
    // the body-size sweep's point: what one request moved, and the rate of it (MB: 10^6 bytes)
    const { direction, bytes } = spec.body;
    result.body = { direction, bytes, mb_per_s: rps === null ? null : round((rps * bytes) / 1e6, 3) };
  }
  // whether the target sustained the rate is the verdict's to say (verdict.Overload), from
  // these counts and the plan's rate
  const vus = spec.vus !== undefined ? spec.vus : closedModel(cfg) ? cfg.connections : undefined;
  const opened = newConns === undefined ? undefined : newConns + count(data, 'new_connections{scenario:warmup}');
  result.counts = countsOf(data, cfg, spec, result, {
    unit: spec.ws ? 'WebSocket sessions' : 'requests',
    opened: vus === undefined ? undefined : opened,
  });
  result.plan = planOf(cfg, spec, vus);
  if (seg) {
    result.segment = segmentPart(data, cfg, spec, seg);
  }
  result.k6 = data;
  return result;
}

// segmentOf is this instance's execution segment ("1/2:1") and the sequence it is one of, or
// null when it runs the whole test.
function segmentOf() {
  const o = exec.test.options || {};
  const segment = o.executionSegment;
  if (!segment || segment === '0:1' || segment === '0') return null;
  return { segment, sequence: o.executionSegmentSequence || null };
}

// segmentPart is what the runner needs to merge this instance with the others of its run
// (runner/merge.go): the trends behind its latency figures, and its test clock. The plan's
// totals are judged there, on the merged counts (the verdict, in Go).
function segmentPart(data, cfg, spec, seg) {
  const s = sel(cfg);
  const clock = metric(data, `clock_ms${s}`);
  const read = clock && clock.values && clock.values.max !== undefined;
  return {
    execution_segment: seg.segment,
    sequence: seg.sequence,
    // the trends behind latency_ms, ttfb_ms and extra: their histograms are what merges
    trends: {
      latency_ms: `${spec.latency || 'http_req_duration'}${s}`,
      ttfb_ms: `${spec.ttfb || 'http_req_waiting'}${s}`,
      extra: Object.fromEntries(Object.entries(spec.extra || {}).map(([k, t]) => [k, `${t}${s}`])),
    },
    // the test clock (ms since this instance started) at its first and last measured
    // iteration: a fresh run's window is from the first instance's start to the last one's end
    clock_ms: read ? { min: clock.values.min, max: clock.values.max } : null,
  };
}

// countsOf are the counts the verdict (Go's package verdict) judges beside the result's
// headline figures; this script counts and never judges.
function countsOf(data, cfg, spec, result, { unit, opened }) {
  const s = sel(cfg);
  const failed = metric(data, 'http_req_failed');
  const upgraded = spec.ws ? count(data, `ws_sessions${sel(cfg, ',status:101')}`) : 0;
  const badResponses = {};
  for (const w of BAD_WHY) {
    const n = count(data, `bad_responses${sel(cfg, `,why:${w}`)}`);
    if (n > 0) badResponses[w] = n;
  }
  const differs = metric(data, 'body_differs_at');
  const c = {
    unit,
    // every answer on the route that did not fail, setup and warm-up included: the upstream
    // must have answered at least these (runner/upstream.go reads what it did answer)
    answered: count(data, 'http_reqs') - (failed ? failed.values.passes : 0) + upgraded,
    iterations: count(data, `iterations${s}`),
    wrong_proto: count(data, 'wrong_proto'),
    bad_responses: badResponses,
    failed_checks: failedCheckNames(data.root_group),
    // the plan's totals are not one segment's to meet: the merge judges them
    failed_thresholds: failedThresholds(data, segmentOf() ? totalsThresholds(cfg) : []),
    // setup() threw: k6 still calls handleSummary, without setup_data
    setup_ok: !!(data.setup_data && data.setup_data.probed),
    findings: spec.invalid ? spec.invalid(data, result) : [],
  };
  if (cfg.mode === 'probe') {
    // the measured samples that failed, by why (lib/probes.js): only the whys that happened
    const failures = {};
    for (const w of FAILURE_WHY) {
      const n = count(data, `probe_failures${sel(cfg, `,why:${w}`)}`);
      if (n > 0) failures[w] = n;
    }
    if (Object.keys(failures).length > 0) c.failures = failures;
  }
  const cut = count(data, 'body_cut');
  if (cut > 0) c.body_cut = cut;
  if (differs && differs.values && differs.values.count) c.body_differs_at = differs.values.min;
  if (cut > 0 || c.body_differs_at !== undefined) c.body_bytes = spec.bodyBytes === undefined ? ROOT_BYTES : spec.bodyBytes;
  if (opened !== undefined) c.connections_opened = opened;
  if (spec.held) {
    c.connections_held = count(data, `connections_held${s}`);
    const lost = {};
    for (const w of LOST_WHY) {
      const n = count(data, `connections_lost{why:${w}}`);
      if (n > 0) lost[w] = n;
    }
    if (Object.keys(lost).length > 0) c.connections_lost = lost;
  }
  return c;
}

// idleOf is the idle block of a result: what the run planned, and the wall-clock windows (ms
// since the epoch) the runner reads the target's RSS and CPU in.
function idleOf({ plan, open_ms: openMs, hold_ms: holdMs }) {
  return {
    connections: plan.connections,
    openers: plan.openers,
    trickle_connections: plan.trickle,
    trickle_rate: plan.rate,
    open_ms: openMs,
    hold_ms: holdMs,
  };
}

// planOf is what the run set out to do: the figures its totals are held to (the thresholds of
// options.js are made from the same ones, for a stock k6's exit code).
function planOf(cfg, spec, vus) {
  const p = {};
  if (spec.expected !== undefined) p[spec.atLeast ? 'min_requests' : 'expected_requests'] = spec.expected;
  if (spec.iterations !== undefined) p.expected_iterations = spec.iterations;
  if (vus !== undefined) {
    p.connections_planned = vus;
    p.connections_allowed = reuseAllowed(vus);
  }
  const perConn = cfg.proto.mux ? cfg.streams : 1;
  if (cfg.mode === 'reused') {
    if (cfg.proto.mux) p.streams = cfg.streams;
    p.in_flight = cfg.connections * perConn;
  } else if (cfg.mode === 'equal-load') {
    if (cfg.proto.mux) p.streams = cfg.streams;
    p.in_flight = spec.arrival.maxVUs * spec.arrival.perIteration;
    p.rate = spec.arrival.rate;
    p.per_iteration = spec.arrival.perIteration;
  } else if (cfg.mode === 'fresh') {
    p.in_flight = Math.min(cfg.freshConnections, cfg.requests);
  } else if (cfg.mode === 'bodies') {
    p.in_flight = cfg.connections; // one request at a time per connection, h2 and h3 too
  } else if (spec.inFlight !== undefined) {
    p.in_flight = spec.inFlight;
  } else {
    p.in_flight = 1;
    p.sample_timeout_ms = SAMPLE_TIMEOUT_MS;
  }
  return p;
}

function configOf(cfg, spec) {
  const c = { target_origin: cfg.origin, address: cfg.target.address };
  if (cfg.point) c.point = cfg.point;
  if (cfg.mode === 'equal-load') {
    c.rate = spec.arrival.rate;
    c.duration = cfg.duration;
    c.warmup = cfg.warmup;
    c.connections = cfg.connections;
    if (cfg.proto.mux) c.streams = cfg.streams;
    c.vus = [spec.arrival.preVUs, spec.arrival.maxVUs]; // the pool the rate ran on
  } else if (cfg.mode === 'reused') {
    c.connections = cfg.connections;
    if (cfg.proto.mux) c.streams = cfg.streams;
    c.duration = cfg.duration;
    c.warmup = cfg.warmup;
  } else if (cfg.mode === 'bodies') {
    c.connections = cfg.connections;
    c.duration = cfg.duration;
    c.warmup = cfg.warmup;
  } else if (cfg.mode === 'fresh') {
    c.requests = cfg.requests;
    c.fresh_connections = Math.min(cfg.freshConnections, cfg.requests);
    if (spec.atLeast) c.fresh_duration = cfg.freshDuration;
  } else if (spec.idle) {
    c.idle_connections = spec.idle.plan.connections;
    c.duration = cfg.duration;
  } else {
    c.samples = cfg.samples;
    if (cfg.route === '/upload') c.upload_bytes = cfg.uploadBytes;
  }
  return c;
}

// summarize is the body of every script's handleSummary.
export function summarize(data, cfg, plan, spec = {}) {
  const result = buildResult(data, cfg, spec);
  const out = outputPath(plan, cfg, result.testid);
  const files = { stdout: formatText(result, out) };
  if (out.path) {
    files[out.path] = `${JSON.stringify(result, null, 2)}\n`;
  }
  return files;
}
