// equal-load: latency at the same offered load for every target (open model). k6's
// constant-arrival-rate executor starts RATE requests per second of GET /, whatever the target's
// latency, for DURATION after an unmeasured warm-up at the same rate, over PROTO (h1, h1c, h2 or
// h3; h3 through k6/x/http3; h1 needs GODEBUG=http2client=0). The runner sets RATE to half the
// slowest valid target's median reused req/s, so every target is measured below its limit and
// the percentiles (p50, p99, p99.9) compare like with like. Every response is checked: 200,
// 4096 bytes, PROTO. A dropped iteration (no VU free to start a request on time) makes the run
// invalid: the offered load was not the one asked for.
import { checkRoot, probeTarget, requestParams, ROOT_BYTES } from './lib/checks.js';
import { client } from './lib/client.js';
import { loadConfig, positiveInt } from './lib/config.js';
import { reusedOptions, sel, TREND_STATS } from './lib/options.js';
import { assertOutput, outputPath, planOutput } from './lib/output.js';
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

// One VU per in-flight request. In an open model a VU is busy for as long as its request takes,
// so the pool must outlast a stall, not only the average: on a shared 2-CPU machine the whole
// box pauses for tens of ms (a GC in k6 or a proxy, the scheduler), and when every VU is busy at
// that moment k6 drops the iteration and the run is invalid. So there are enough VUs made before
// the test to keep starting requests through a 100 ms stall at RATE (and never fewer than the
// reused scenario had in flight, nor 64), up to 1000; twice that may be added if needed.
const inFlight = cfg.connections * (cfg.proto.mux ? cfg.streams : 1);
const preVUs = Math.min(Math.max(inFlight, 64, Math.ceil(cfg.rate / 10)), 1000);

function arrival(duration, startTime) {
  return {
    executor: 'constant-arrival-rate',
    rate: cfg.rate,
    timeUnit: '1s',
    duration: ms(duration),
    startTime: ms(startTime),
    preAllocatedVUs: preVUs,
    maxVUs: preVUs * 2,
    tags: { route: cfg.route },
  };
}

export const options = (() => {
  const o = reusedOptions(cfg);
  o.summaryTrendStats = [...TREND_STATS, 'p(99.9)'];
  delete o.batch;
  delete o.batchPerHost;
  const scenarios = {};
  let start = 0;
  if (cfg.warmupS > 0) {
    scenarios.warmup = { ...arrival(cfg.warmupS, 0), gracefulStop: '1s' };
    start = cfg.warmupS + 1;
  }
  scenarios[cfg.k6Scenario] = arrival(cfg.durationS, start);
  o.scenarios = scenarios;
  // Dropped iterations count in the measured window only: the warm-up is where the VUs open
  // their connections (a burst of handshakes), which is what it is there for.
  delete o.thresholds.dropped_iterations;
  o.thresholds[`dropped_iterations${sel(cfg)}`] = ['count==0'];
  return o;
})();

export function setup() {
  assertOutput(out);
  return { probed: probeTarget(cfg, { expectBytes: ROOT_BYTES }) };
}

export default function () {
  checkRoot(client(cfg).get(cfg.url, params), cfg);
}

function round(x) {
  return Math.round(x * 1000) / 1000;
}

export function handleSummary(data) {
  const result = buildResult(data, cfg);
  const d = data.metrics[`dropped_iterations${sel(cfg)}`];
  const dropped = d && d.values ? d.values.count : 0;
  const warmupDropped = result.dropped_iterations - dropped;
  result.dropped_iterations = dropped;
  if (data.setup_data && data.setup_data.probed) {
    result.invalid = result.invalid.filter((why) => !/ iterations dropped$/.test(why));
    if (dropped > 0) result.invalid.push(`${dropped} iterations dropped`);
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
  const path = outputPath(out, cfg, result.testid);
  const shape = `mode equal-load: ${cfg.rate} req/s offered (constant arrival rate), ${preVUs} to ${preVUs * 2} VUs`;
  const files = { stdout: formatText(result, path).replace(/mode equal-load: .*/, shape) };
  if (path.path) {
    files[path.path] = `${JSON.stringify(result, null, 2)}\n`;
  }
  return files;
}
