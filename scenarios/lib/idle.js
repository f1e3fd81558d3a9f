// The idle scenario (idle.js): what holding many idle keep-alive connections costs a target, on
// the native loop (k6/x/proxybench/load idle(), held()). In the warm-up, OPENERS VUs open
// IDLE_CONNECTIONS connections between them, each with one checked GET / (so that the target
// has accepted and served it, not only let the kernel complete its handshake); then, for
// DURATION (the measured scenario), the connections stay idle but for a trickle: TRICKLE_RATE
// requests a second over TRICKLE_CONNECTIONS of them, each sent when due (the open model). At
// the end every VU counts the connections the target still holds (connections_held: the plan's
// IDLE_CONNECTIONS, or the verdict says it caps connections) and closes them. The runner reads
// the target's RSS before the opening and over the hold (the idle_open_ms and idle_hold_ms
// gauges are their wall-clock bounds) and its CPU over the hold: the result's idle_cost.
import exec from 'k6/execution';
import { Gauge } from 'k6/metrics';
import { sleep } from 'k6';
import { positiveInt, loadConfig } from './config.js';
import { clockMs, now } from './metrics.js';
import { baseOptions, hook, LOST_WHY, sel, WARMUP_GAP_S } from './options.js';
import { planOutput } from './output.js';
import { nativeLoop, NATIVE_CLIENT, rootRequest } from './native.js';
import { setupRoot } from './scenario.js';
import { summarize } from './summary.js';

// DEFAULT_IDLE_CONNECTIONS is IDLE_CONNECTIONS' default (settings/table.go says it too).
export const DEFAULT_IDLE_CONNECTIONS = 10000;

// The VUs that open the connections, each its share in turn: enough to keep both ends busy on
// a few CPUs (a TLS handshake waits on the target), few enough to cost k6 nothing much.
export const OPENERS = 16;

// The trickle: requests a second in all, over this many of the held connections (each an
// opener's first, its own).
export const TRICKLE_RATE = 40;
export const TRICKLE_CONNECTIONS = 4;

// OPEN_TIMEOUT_MS bounds each connection's opening (connect, TLS, its first answer): a target
// that no longer accepts costs this per connection, and the window's end cuts the last short.
export const OPEN_TIMEOUT_MS = 10000;

// OPEN_RATE is the connections a second the opening window allows for, by protocol: on 2 CPUs
// shared with the client, direct opens about 6000/s in cleartext and 1000/s over TLS; the
// window gives every target a quarter of that, and the warm-up at least.
export const OPEN_RATE = { h1c: 1500, h1: 250, h2: 250 };

// idlePlan is the run's plan: the connections, the VUs and their shares, the trickle and the
// opening window (seconds).
export function idlePlan(cfg) {
  const connections = positiveInt('IDLE_CONNECTIONS', __ENV.IDLE_CONNECTIONS || DEFAULT_IDLE_CONNECTIONS);
  const openers = Math.min(OPENERS, connections);
  const trickle = Math.min(TRICKLE_CONNECTIONS, openers);
  return {
    connections,
    openers,
    trickle,
    rate: TRICKLE_RATE,
    openS: Math.max(cfg.warmupS, Math.ceil(connections / OPEN_RATE[cfg.proto.name])),
  };
}

// idleShare is how many connections opener i (from 0) of n opens, of total: the shares differ
// by at most one.
export function idleShare(total, n, i) {
  return Math.floor(total / n) + (i < total % n ? 1 : 0);
}

// The wall-clock bounds (ms since the epoch) of the opening and of the hold: each gauge is
// given the window's start and end, so its min and max are they.
const openMs = new Gauge('idle_open_ms');
const holdMs = new Gauge('idle_hold_ms');

function ms(s) {
  return `${Math.round(s * 1000)}ms`;
}

// idleOptions: the opening as the warm-up (excluded from the figures, as any warm-up), then the
// hold as the measured scenario, on the same VUs (k6 hands a VU, and so its connections, from
// one scenario to the next when they do not overlap).
export function idleOptions(cfg, plan) {
  const o = baseOptions(cfg);
  o.scenarios = {
    warmup: {
      executor: 'per-vu-iterations',
      vus: plan.openers,
      iterations: 1,
      maxDuration: ms(plan.openS),
      gracefulStop: ms(WARMUP_GAP_S),
      tags: { route: cfg.route },
    },
    [cfg.k6Scenario]: {
      executor: 'per-vu-iterations',
      vus: plan.openers,
      iterations: 1,
      startTime: ms(plan.openS + WARMUP_GAP_S),
      maxDuration: ms(cfg.durationS + OPEN_TIMEOUT_MS / 1000),
      tags: { route: cfg.route },
    },
  };
  const s = sel(cfg);
  // every connection planned held at the end (the verdict's rule, for a stock k6's exit code)
  o.thresholds[`connections_held${s}`] = [`count>=${plan.connections}`];
  o.thresholds[`iterations${s}`] = [`count==${plan.openers}`];
  o.thresholds[`clock_ms${s}`] = hook.gauge;
  o.thresholds[`behind_schedule${s}`] = hook.counter;
  o.thresholds[`start_lag${s}`] = hook.trend;
  o.thresholds['new_connections{scenario:warmup}'] = hook.counter;
  for (const why of LOST_WHY) {
    o.thresholds[`connections_lost{why:${why}}`] = hook.counter;
  }
  return o;
}

// idleScenario builds idle.js.
export function idleScenario({ scenario }) {
  const cfg = loadConfig({ scenario, client: NATIVE_CLIENT });
  const out = planOutput(cfg);
  const plan = idlePlan(cfg);
  const loop = nativeLoop(cfg, { ...rootRequest(cfg), timeout: OPEN_TIMEOUT_MS });
  return {
    options: idleOptions(cfg, plan),
    setup: () => setupRoot(cfg, out),
    iteration() {
      const sc = exec.scenario;
      const i = (exec.vu.idInTest - 1) % plan.openers;
      if (sc.name !== cfg.k6Scenario) {
        const until = sc.startTime + plan.openS * 1000;
        openMs.add(sc.startTime);
        openMs.add(until);
        loop.idle(idleShare(plan.connections, plan.openers, i), until);
        return;
      }
      const until = sc.startTime + cfg.durationS * 1000;
      holdMs.add(sc.startTime);
      holdMs.add(until);
      clockMs.add(now());
      if (i < plan.trickle) {
        // trickle VU i's requests are due at start + (i + k * trickle) / rate, k = 0, 1, …
        loop.open(sc.startTime + (i * 1000) / plan.rate, until, plan.rate / plan.trickle);
      } else {
        sleep(Math.max(0, until - Date.now()) / 1000);
      }
      clockMs.add(now());
      loop.held();
    },
    handleSummary(data) {
      const gauge = (name) => {
        const m = data.metrics[name];
        return m && m.values ? [m.values.min, m.values.max] : null;
      };
      return summarize(data, cfg, out, {
        vus: plan.connections,
        held: true,
        inFlight: plan.trickle,
        idle: { plan, open_ms: gauge('idle_open_ms'), hold_ms: gauge('idle_hold_ms') },
      });
    },
  };
}
