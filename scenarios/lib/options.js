// k6 options for the four kinds of script (reused, fresh, probe, equal-load). Thresholds define
// validity: a run whose checks, requests, protocol or iterations are not all as they must be
// fails its thresholds (k6 exits with 99) and its result says invalid (summary.js).
import { positiveInt } from './config.js';
import { hosts } from './targets.js';

export const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'];

// The protocols k6/http (and k6/x/proxybench/http3) can report in the proto tag.
export const PROTO_TAGS = ['HTTP/1.0', 'HTTP/1.1', 'HTTP/2.0', 'HTTP/3.0'];

// Why a load scenario's response failed its check (checks.js checkRoot).
export const BAD_WHY = ['status', 'size', 'body', 'proto'];

// Why a connection the plan counted on was not held (k6/x/proxybench/load's connections_lost),
// which the verdict words (verdict/verdict.go lostWords).
export const LOST_WHY = ['refused', 'reset', 'timeout', 'tls', 'answer', 'unopened', 'closed', 'other'];

// Why a probe sample failed: the why tag of probe_failures (lib/probes.js), which the verdict
// words (verdict/failures.go).
//   timeout: no response head within the sample's timeout (the connect, the TLS or QUIC
//     handshake or the answer hung); stalled: the head came, the body did not end within it
//   refused, reset, tls: the connection was refused, reset or closed, or its TLS failed
//   no_upgrade: no 101 within it; not_upgraded: answered without a 101; no_welcome: upgraded,
//     then no message within it; no_echo: no echo within it (ws, k6/x/proxybench/ws's words)
export const FAILURE_WHY = [
  'timeout',
  'stalled',
  'refused',
  'reset',
  'tls',
  'no_upgrade',
  'not_upgraded',
  'no_welcome',
  'no_echo',
  'other',
];

// Between the warm-up and the measured scenario: in-flight warm-up iterations finish (its
// gracefulStop) before measuring starts, so that k6 hands the same VUs — and so the same
// warm connections — to the measured scenario instead of starting new ones next to them.
export const WARMUP_GAP_S = 1;

// Probes warm their connection with one unmeasured iteration, given this long.
export const PROBE_WARMUP_S = 1;

// SAMPLE_TIMEOUT_MS is how long a probe sample may take, whatever the target does: its client
// ends it then (k6/http's, k6/x/proxybench/http3's and k6/x/proxybench/sse's timeout param covers
// the connect, the TLS or QUIC handshake, the response's head and its whole body;
// k6/x/proxybench/ws's the connect to the echo), the sample fails saying why (probe_failures),
// and the next one starts. k6's own default is 60 s: five samples of a silent target would take
// five minutes, RUN_TIMEOUT's own.
export const SAMPLE_TIMEOUT_MS = 10000;
export const SAMPLE_TIMEOUT = `${SAMPLE_TIMEOUT_MS}ms`;

// REUSE_MARGIN is the share of extra connections a reused (or equal-load) run may open over
// the one per VU it plans (a connection a client or server closes now and then); more, and the
// target was not keeping connections alive: the run measured handshakes, not steady state.
export const REUSE_MARGIN = 0.1;

// reuseAllowed is how many connections a run of vus VUs may open in all (warm-up included).
export function reuseAllowed(vus) {
  return vus + Math.max(1, Math.ceil(vus * REUSE_MARGIN));
}

// SEGMENTS is set by the runner (runner/segments.go) when it splits one run over that many k6
// instances, each an execution segment doing its share of the plan. The rules about the plan's
// totals (fresh: all REQUESTS done; reused: at most reuseAllowed(CONNECTIONS) connections) are
// then not one instance's to judge: its share would fail them. They are left out of the
// thresholds here, and the runner judges them on the merged result (runner/merge.go). The rules
// that add up (checks, failed requests, protocol, dropped iterations) stay in every instance.
export function segmented() {
  const v = __ENV.SEGMENTS;
  return v !== undefined && v !== '' && positiveInt('SEGMENTS', v) > 1;
}

// totalsThresholds are the thresholds of the plan's totals (see segmented()): an instance
// started with --execution-segment but without SEGMENTS (by hand, on the k6-operator) fails
// them for doing its share, and its result (summary.js) does not count that against it.
export function totalsThresholds(cfg) {
  return ['new_connections', `iterations${sel(cfg)}`];
}

function ms(s) {
  return `${Math.round(s * 1000)}ms`;
}

// hook makes k6 compute a submetric for the summary data: k6 only keeps the submetrics that a
// threshold names. These thresholds can't fail.
export const hook = {
  counter: ['count>=0'],
  trend: ['max>=0'],
  gauge: ['value>=0'],
};

// sel is how thresholds select the measured samples; warm-up runs as scenario
// "warmup" and setup() has no scenario at all, so neither counts.
export function sel(cfg, more = '') {
  return `{scenario:${cfg.k6Scenario}${more}}`;
}

function validity(cfg) {
  const s = sel(cfg);
  const th = {
    [`checks${s}`]: ['rate==1'],
    [`http_req_failed${s}`]: ['rate==0'],
    wrong_proto: ['count==0'],
    [`http_reqs${s}`]: hook.counter,
    [`http_req_duration${s}`]: hook.trend,
    [`http_req_waiting${s}`]: hook.trend,
    [`new_connections${s}`]: hook.counter,
    [`iterations${s}`]: hook.counter,
  };
  for (const p of PROTO_TAGS) {
    th[`http_reqs${sel(cfg, `,proto:${p}`)}`] = hook.counter;
  }
  if (cfg.mode === 'equal-load') {
    // an open model's dropped iterations are its result (could not sustain the rate), counted
    // in the measured window only: the warm-up is where the VUs open their connections
    th[`dropped_iterations${s}`] = hook.counter;
  } else {
    th.dropped_iterations = ['count==0'];
  }
  for (const why of BAD_WHY) {
    th[`bad_responses${sel(cfg, `,why:${why}`)}`] = hook.counter;
  }
  // the first byte at which a body differed from the upstream's (checks.js), any scenario
  th.body_differs_at = hook.trend;
  return th;
}

// cloud is options.cloud, read by `k6 cloud run` (and ignored by `k6 run`): the run is named by
// its scenario and target, in the project K6_CLOUD_PROJECT_ID names (else the stack's default).
export function cloudOptions(cfg) {
  const o = { name: `proxybench ${cfg.k6Scenario} ${cfg.target.name}` };
  const project = __ENV.K6_CLOUD_PROJECT_ID;
  if (project) {
    if (!/^\d+$/.test(String(project).trim())) {
      throw new Error(`K6_CLOUD_PROJECT_ID must be a project's number, got "${project}"`);
    }
    o.projectID = Number(project);
  }
  return o;
}

// baseOptions are every script's options but its scenarios.
export function baseOptions(cfg) {
  return {
    hosts: hosts(cfg.target),
    cloud: cloudOptions(cfg),
    // test-wide tags; k6 adds scenario and proto (negotiated, e.g. HTTP/2.0) itself
    tags: { testid: cfg.testid, target: cfg.target.name, mode: cfg.mode, ...(cfg.point ? { point: cfg.point } : {}) },
    // equal-load compares the tail at the same offered load, to p99.9
    summaryTrendStats: cfg.mode === 'equal-load' ? [...TREND_STATS, 'p(99.9)'] : TREND_STATS,
    setupTimeout: '30s',
    thresholds: validity(cfg),
  };
}

// closedModel tells the scripts whose VUs each keep one connection and send one request after
// another on it for DURATION after a warm-up: the reused cells, and the body-size sweep's runs
// (lib/bodysizes.js). Their req/s counts the requests completed within DURATION (window.js).
export function closedModel(cfg) {
  return cfg.mode === 'reused' || cfg.mode === 'bodies';
}

// reusedOptions: a warm-up (excluded), then C VUs for DURATION, each on its own keep-alive
// connection; for h2 and h3 each VU's connection carries S concurrent streams (one batch).
export function reusedOptions(cfg) {
  const o = baseOptions(cfg);
  const vus = cfg.connections;
  const scenarios = {};
  let start = 0;
  if (cfg.warmupS > 0) {
    scenarios.warmup = {
      executor: 'constant-vus',
      vus,
      duration: ms(cfg.warmupS),
      gracefulStop: ms(WARMUP_GAP_S),
      tags: { route: cfg.route },
    };
    start = cfg.warmupS + WARMUP_GAP_S;
  }
  scenarios[cfg.k6Scenario] = {
    executor: 'constant-vus',
    vus,
    duration: ms(cfg.durationS),
    // k6's default, stated: iterations running at DURATION may finish (their responses are
    // still checked) but are not counted in req/s (window.js)
    gracefulStop: '30s',
    startTime: ms(start),
    tags: { route: cfg.route },
  };
  o.scenarios = scenarios;
  if (closedModel(cfg)) {
    o.thresholds[`late_requests${sel(cfg)}`] = hook.counter; // window.js: not equal-load's
  }
  // one connection per VU, opened in the warm-up and kept by the measured scenario (setup's
  // probe counts no connection): more, and the run is invalid (summary.js says why)
  o.thresholds.new_connections = segmented() ? hook.counter : [`count<=${reuseAllowed(vus)}`];
  o.thresholds['new_connections{scenario:warmup}'] = hook.counter;
  batchAll(o, cfg);
  return o;
}

// batchAll lets one batch carry all of a connection's STREAMS: k6 defaults to 6 parallel
// requests per host and 20 per batch (k6/x/proxybench/http3 applies the same).
function batchAll(o, cfg) {
  if (cfg.proto.mux) {
    o.batch = cfg.streams;
    o.batchPerHost = cfg.streams;
  }
}

// equalLoadPlan is the offered rate of an equal-load run (RATE req/s: the runner sets it from
// the matrix's figures) and the VU pool it runs on.
// h1/h1c: one VU per in-flight request. A VU is busy for as long as its request takes, so the
// pool must outlast a stall, not only the average: on a shared 2-CPU machine the whole box
// pauses for tens of ms, and when every VU is busy then k6 drops the iteration. So there are VUs
// to keep starting requests through a 100 ms stall (never fewer than the reused cell had in
// flight, nor 64), up to 1000. h2/h3: the reused cell's connections, each VU one connection
// carrying a batch. Either may add as many again through a stall.
export function equalLoadPlan(cfg) {
  const rate = positiveInt('RATE', __ENV.RATE || '100');
  const mux = cfg.proto.mux;
  const preVUs = mux ? cfg.connections : Math.min(Math.max(cfg.connections, 64, Math.ceil(rate / 10)), 1000);
  return { rate, perIteration: mux ? cfg.streams : 1, preVUs, maxVUs: preVUs * 2 };
}

// equalLoadOptions: plan.rate requests a second of GET / for DURATION (constant-arrival-rate),
// after an unmeasured warm-up at the same rate, whatever the target's latency.
export function equalLoadOptions(cfg, plan) {
  const o = baseOptions(cfg);
  const arrival = (duration, startTime) => ({
    executor: 'constant-arrival-rate',
    // RATE iterations a second, or for h2/h3 RATE batches of STREAMS requests per STREAMS seconds
    rate: plan.rate,
    timeUnit: `${plan.perIteration}s`,
    duration: ms(duration),
    startTime: ms(startTime),
    preAllocatedVUs: plan.preVUs,
    maxVUs: plan.maxVUs,
    tags: { route: cfg.route },
  });
  o.scenarios = {};
  let start = 0;
  if (cfg.warmupS > 0) {
    o.scenarios.warmup = { ...arrival(cfg.warmupS, 0), gracefulStop: ms(WARMUP_GAP_S) };
    start = cfg.warmupS + WARMUP_GAP_S;
  }
  o.scenarios[cfg.k6Scenario] = arrival(cfg.durationS, start);
  // one connection per VU k6 ran, as in the reused cells (summary.js holds the run to vus_max)
  o.thresholds.new_connections = [`count<=${reuseAllowed(plan.maxVUs)}`];
  o.thresholds['new_connections{scenario:warmup}'] = hook.counter;
  o.thresholds.vus_max = hook.gauge;
  batchAll(o, cfg);
  return o;
}

// freshOptions: REQUESTS iterations shared by FRESH_CONNECTIONS VUs, each request on a
// connection of its own (keep-alive off: for TLS every request is a full handshake).
export function freshOptions(cfg) {
  const o = baseOptions(cfg);
  o.noConnectionReuse = true;
  o.noVUConnectionReuse = true;
  o.scenarios = {
    [cfg.k6Scenario]: {
      executor: 'shared-iterations',
      vus: Math.min(cfg.freshConnections, cfg.requests),
      iterations: cfg.requests,
      maxDuration: '10m',
      tags: { route: cfg.route },
    },
  };
  o.thresholds[`reused_conn_requests${sel(cfg)}`] = ['count==0'];
  // all done in maxDuration
  o.thresholds[`iterations${sel(cfg)}`] = segmented() ? hook.counter : [`count==${cfg.requests}`];
  o.thresholds[`clock_ms${sel(cfg)}`] = hook.gauge;
  o.thresholds[`http_req_connecting${sel(cfg)}`] = hook.trend;
  o.thresholds[`conn_ttfb${sel(cfg)}`] = hook.trend;
  if (cfg.proto.tls) {
    o.thresholds[`http_req_tls_handshaking${sel(cfg)}`] = hook.trend;
  }
  return o;
}

// probeOptions: one VU, one unmeasured warm-up iteration, then SAMPLES measured ones on the
// same (warm) connection. trends: extra trends to keep for the result (sse_first_event, …),
// selected on the measured scenario; counters: extra counter submetrics, as full selectors.
export function probeOptions(cfg, { trends = [], counters = [] } = {}) {
  const o = baseOptions(cfg);
  o.scenarios = {
    warmup: {
      executor: 'per-vu-iterations',
      vus: 1,
      iterations: 1,
      maxDuration: ms(PROBE_WARMUP_S),
      gracefulStop: '0s',
      tags: { route: cfg.route },
    },
    [cfg.k6Scenario]: {
      executor: 'per-vu-iterations',
      vus: 1,
      iterations: cfg.samples,
      startTime: ms(PROBE_WARMUP_S),
      maxDuration: '10m',
      tags: { route: cfg.route },
    },
  };
  o.thresholds[`clock_ms${sel(cfg)}`] = hook.gauge;
  o.thresholds[`iterations${sel(cfg)}`] = [`count==${cfg.samples}`];
  for (const t of trends) {
    o.thresholds[`${t}${sel(cfg)}`] = hook.trend;
  }
  for (const c of counters) {
    o.thresholds[c] = hook.counter; // full selectors, e.g. ws_sessions{scenario:ws-h1,status:101}
  }
  for (const why of FAILURE_WHY) {
    o.thresholds[`probe_failures${sel(cfg, `,why:${why}`)}`] = hook.counter;
  }
  // the longest sample, which must end within its timeout (lib/probes.js SAMPLE_TIMEOUT_MS)
  o.thresholds[`iteration_duration${sel(cfg)}`] = hook.trend;
  return o;
}
