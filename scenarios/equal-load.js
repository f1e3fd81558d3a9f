// equal-load: latency at the same offered load for every target (open model). k6's
// constant-arrival-rate executor starts RATE requests per second of GET /, whatever the target's
// latency, for DURATION after an unmeasured warm-up at the same rate, over PROTO (h1, h1c, h2 or
// h3; h3 through k6/x/proxybench/http3; h1 needs GODEBUG=http2client=0). The runner sets RATE to half the
// slowest valid target's median reused req/s, so every target is measured below its limit and
// the percentiles (p50, p99, p99.9) compare like with like. Every response is checked: 200,
// 4096 bytes, PROTO.
//
// h2 and h3 are multiplexed as in the reused cells: CONNECTIONS VUs, each one connection, and
// every iteration one batch of STREAMS requests on it, started RATE/STREAMS times a second.
// h1 and h1c have one request in flight per connection, so a VU per request in flight.
//
// A target that cannot keep up shows it as dropped iterations (no VU free to start a request
// on time): that is a result — "could not sustain RATE req/s" — not an invalid run. A run whose
// connections were not kept alive (more opened than VUs) is invalid, as in the reused cells.
import exec from 'k6/execution';
import { checkRoot, requestParams } from './lib/checks.js';
import { client } from './lib/client.js';
import { loadConfig, positiveInt } from './lib/config.js';
import { reuseAllowed, reusedOptions, sel, TREND_STATS } from './lib/options.js';
import { outputPath, planOutput } from './lib/output.js';
import { setupRoot } from './lib/scenario.js';
import { buildResult } from './lib/summary.js';
import { formatText } from './lib/text.js';

const cfg = loadConfig({ scenario: 'equal-load', mode: 'probe', route: '/' });
cfg.mode = 'equal-load'; // PROTO read as a probe does; measured as a load scenario
cfg.rate = positiveInt('RATE', __ENV.RATE || '100');
const out = planOutput(cfg);
const params = requestParams(cfg);

function ms(s) {
  return `${Math.round(s * 1000)}ms`;
}

// h1/h1c: one VU per in-flight request. In an open model a VU is busy for as long as its request
// takes, so the pool must outlast a stall, not only the average: on a shared 2-CPU machine the
// whole box pauses for tens of ms (a GC in k6 or a proxy, the scheduler), and when every VU is
// busy at that moment k6 drops the iteration. So there are enough VUs made before the test to
// keep starting requests through a 100 ms stall at RATE (and never fewer than the reused
// scenario had in flight, nor 64), up to 1000; twice that may be added if needed.
// h2/h3: the reused cell's connections, each VU one connection carrying a batch; as for h1,
// twice that may be added through a stall (a VU, and so a connection, more only when every
// one is busy at an arrival).
const mux = cfg.proto.mux;
const perIteration = mux ? cfg.streams : 1;
const preVUs = mux ? cfg.connections : Math.min(Math.max(cfg.connections, 64, Math.ceil(cfg.rate / 10)), 1000);
const maxVUs = preVUs * 2;
const batch = Array.from({ length: cfg.streams }, () => ['GET', cfg.url, null, params]);

function arrival(duration, startTime) {
  return {
    executor: 'constant-arrival-rate',
    // RATE requests a second: RATE iterations per second, or for h2/h3 RATE batches of STREAMS
    // requests per STREAMS seconds
    rate: cfg.rate,
    timeUnit: `${perIteration}s`,
    duration: ms(duration),
    startTime: ms(startTime),
    preAllocatedVUs: preVUs,
    maxVUs,
    tags: { route: cfg.route },
  };
}

export const options = (() => {
  const o = reusedOptions(cfg);
  o.summaryTrendStats = [...TREND_STATS, 'p(99.9)'];
  if (!mux) {
    delete o.batch;
    delete o.batchPerHost;
  }
  const scenarios = {};
  let start = 0;
  if (cfg.warmupS > 0) {
    scenarios.warmup = { ...arrival(cfg.warmupS, 0), gracefulStop: '1s' };
    start = cfg.warmupS + 1;
  }
  scenarios[cfg.k6Scenario] = arrival(cfg.durationS, start);
  o.scenarios = scenarios;
  // Dropped iterations count in the measured window only (the warm-up is where the VUs open
  // their connections, a burst of handshakes), and they are the result, not a failure: no
  // threshold on them.
  delete o.thresholds.dropped_iterations;
  o.thresholds[`dropped_iterations${sel(cfg)}`] = ['count>=0'];
  o.thresholds['new_connections{scenario:warmup}'] = ['count>=0'];
  o.thresholds.new_connections = [`count<=${reuseAllowed(maxVUs)}`];
  o.thresholds.vus_max = ['value>=0'];
  return o;
})();

export function setup() {
  return setupRoot(cfg, out);
}

const http = client(cfg);

export default function () {
  if (!mux) {
    checkRoot(http.get(cfg.url, params), cfg);
    return;
  }
  if (cfg.proto.name === 'h2' && exec.vu.iterationInInstance === 0) {
    // as reused-h2: one request opens the VU's connection before a batch would race STREAMS dials
    checkRoot(http.get(cfg.url, params), cfg);
  }
  for (const res of http.batch(batch)) {
    checkRoot(res, cfg);
  }
}

function round(x) {
  return Math.round(x * 1000) / 1000;
}

export function handleSummary(data) {
  // the connections are held to one per VU that k6 ran, as the reused cells' are
  const result = buildResult(data, cfg, { vus: data.metrics.vus_max ? data.metrics.vus_max.values.max : maxVUs });
  const d = data.metrics[`dropped_iterations${sel(cfg)}`];
  const dropped = d && d.values ? d.values.count : 0;
  const warmupDropped = result.dropped_iterations - dropped;
  result.dropped_iterations = dropped;
  if (data.setup_data && data.setup_data.probed) {
    result.invalid = result.invalid.filter((why) => !/ iterations dropped$/.test(why));
  }
  if (dropped > 0) {
    result.overload =
      `could not sustain ${cfg.rate} req/s: ${dropped * perIteration} of ` +
      `${result.requests + dropped * perIteration} requests not started on time (every VU busy)`;
  }
  if (warmupDropped > 0) result.warmup_dropped_iterations = warmupDropped;
  result.valid = result.invalid.length === 0;
  // the measured window is DURATION, as for reused: arrivals are scheduled over exactly that
  result.duration_s = cfg.durationS;
  result.duration_from = 'DURATION';
  result.rps = cfg.durationS ? round(result.requests / cfg.durationS) : null;
  const m = data.metrics[`http_req_duration${sel(cfg)}`];
  if (result.latency_ms && m && m.values && m.values['p(99.9)'] !== undefined) {
    result.latency_ms.p999 = round(m.values['p(99.9)']);
  }
  result.config = {
    target_origin: cfg.origin,
    address: cfg.target.address,
    rate: cfg.rate,
    duration: cfg.duration,
    warmup: cfg.warmup,
    connections: cfg.connections,
  };
  if (mux) result.config.streams = cfg.streams;
  const path = outputPath(out, cfg, result.testid);
  const vuText = mux
    ? `${preVUs} to ${maxVUs} connections × ${cfg.streams} streams`
    : `${preVUs} to ${maxVUs} VUs`;
  const shape = `mode equal-load: ${cfg.rate} req/s offered (constant arrival rate), ${vuText}`;
  const files = { stdout: formatText(result, path).replace(/mode equal-load: .*/, shape) };
  if (path.path) {
    files[path.path] = `${JSON.stringify(result, null, 2)}\n`;
  }
  return files;
}
