// The reused, fresh and equal-load (h1c, h1) scenarios on our native load loop
// (k6/x/proxybench/load). Reused: the same options,
// thresholds, probe and result as their k6/http twins (scenario.js, reused-h2.js), but each VU
// runs one long iteration per k6 scenario in which Go sends GET / after GET / on the VU's
// connection until the scenario's DURATION (or WARMUP) is over, verifying every answer
// (status 200, the 4096-byte body byte for byte as it is read, the protocol) and emitting k6's
// samples, bad_responses{why} and body_differs_at included. The JavaScript around each
// request is gone, and with it most of what k6 costs per request (scenarios/README.md, "The client").
import exec from 'k6/execution';
import { ROOT_BODY, ROOT_BYTES } from './bodies.js';
import { requestParams, rootCheckName } from './checks.js';
import { loadConfig } from './config.js';
import { extension } from './extension.js';
import { clockMs, now } from './metrics.js';
import { freshOptions, hook, reusedOptions, segmented, sel } from './options.js';
import { planOutput } from './output.js';
import { FRESH_EXTRA, setupRoot } from './scenario.js';
import { summarize } from './summary.js';
import { closedIteration } from './window.js';

export const NATIVE_CLIENT = 'native';

const load = extension('k6/x/proxybench/load');

// rootRequest is what the native loop sends and holds every answer to by default: GET / and
// its 4096 bytes, compared as they are read (lib/bodies.js).
export function rootRequest(cfg) {
  return { expectBytes: ROOT_BYTES, expect: ROOT_BODY, check: rootCheckName(cfg) };
}

// nativeLoop is the VU's loop for cfg.url as cfg measures it: request says what it sends and
// what every answer must be (GET / unless the body-size sweep's: lib/bodysizes.js), with any
// option of the loop's own (idle's timeout).
export function nativeLoop(cfg, request = rootRequest(cfg)) {
  return load.client({
    url: cfg.url,
    proto: cfg.proto.name,
    streams: cfg.proto.mux && cfg.mode === 'reused' ? cfg.streams : 1,
    tags: requestParams(cfg).tags,
    ...request,
  });
}

// nativeScenario builds reused-<proto> for h1c, h1 or h2 on the native loop.
export function nativeScenario({ scenario }) {
  const cfg = loadConfig({ scenario, client: NATIVE_CLIENT });
  const out = planOutput(cfg);
  const loop = nativeLoop(cfg);
  const options = reusedOptions(cfg);
  // every VU's connection still serving when the window ends (the verdict's rule; a split
  // run's instance holds its share, judged on the merged run)
  options.thresholds[`connections_held${sel(cfg)}`] = segmented() ? hook.counter : [`count>=${cfg.connections}`];
  return {
    options,
    setup: () => setupRoot(cfg, out),
    iteration: closedIteration(cfg, loop),
    handleSummary(data) {
      return summarize(data, cfg, out, { held: true });
    },
  };
}

// A native fresh run's VU sends its share in at least FRESH_PARTS iterations of at most
// FRESH_CHUNK requests: k6 counts an iteration's bytes (data_sent, data_received) when it ends,
// so a whole share in one iteration would put them all at its end, where a second's figure
// should hold that second's. A few µs of k6 per request, against a whole share's bytes in one
// lump (a dashboard's peak second showed a third more bytes than its requests could bring).
export const FRESH_CHUNK = 50;
export const FRESH_PARTS = 4;

// freshIterations is how many iterations each of vus VUs runs to send requests.
export function freshIterations(requests, vus) {
  return Math.max(FRESH_PARTS, Math.ceil(Math.ceil(requests / vus) / FRESH_CHUNK));
}

// freshShare is how many requests iteration k of VU i (both from 0) sends, when REQUESTS are
// shared by vus VUs, each running `iterations` iterations: the VUs' shares differ by at most
// one, and so do the iterations' parts of a share.
export function freshShare(requests, vus, iterations, i, k) {
  const share = Math.floor(requests / vus) + (i < requests % vus ? 1 : 0);
  return Math.floor(share / iterations) + (k < share % iterations ? 1 : 0);
}

// nativeFreshScenario builds fresh-<proto> for h1c, h1 or h2 on the native loop: REQUESTS
// requests at least, each on a connection of its own, FRESH_CONNECTIONS at a time. Each VU
// sends its share of REQUESTS (they differ by at most one) in a few iterations
// (freshIterations), so the k6 iteration around every request is gone with the rest of
// k6/http's cost; in its last one it goes on until FRESH_DURATION after the scenario's start.
// That floor is for the fast protocols: 2,000 cleartext requests last 0.4 s here, too short a
// window for a stable req/s, while a TLS run of as many lasts it anyway.
// The run is held to what the k6/http twin is: every request timed its own TCP (and TLS)
// handshake, REQUESTS of them at least, and rps over the first request's start to the last
// one's end.
export function nativeFreshScenario({ scenario }) {
  const cfg = loadConfig({ scenario, client: NATIVE_CLIENT });
  if (segmented()) {
    throw new Error(`${scenario} on the native loop runs as one instance: split it (SEGMENTS) with CLIENT=k6`);
  }
  const out = planOutput(cfg);
  const loop = nativeLoop(cfg);
  const vus = Math.min(cfg.freshConnections, cfg.requests);
  const iterations = freshIterations(cfg.requests, vus);
  const options = freshOptions(cfg);
  options.scenarios[cfg.k6Scenario] = {
    executor: 'per-vu-iterations',
    vus,
    iterations,
    maxDuration: '10m',
    tags: { route: cfg.route },
  };
  options.thresholds[`iterations${sel(cfg)}`] = [`count==${vus * iterations}`];
  options.thresholds[`http_reqs${sel(cfg)}`] = [`count>=${cfg.requests}`];
  return {
    options,
    setup: () => setupRoot(cfg, out),
    iteration() {
      const k = exec.vu.iterationInScenario;
      const n = freshShare(cfg.requests, vus, iterations, exec.vu.idInTest - 1, k);
      clockMs.add(now());
      loop.fresh(n, Date.now() + 10 * 60 * 1000);
      const floor = exec.scenario.startTime + cfg.freshDurationS * 1000;
      if (k === iterations - 1 && Date.now() < floor) {
        loop.fresh(Number.MAX_SAFE_INTEGER, floor);
      }
      clockMs.add(now());
    },
    handleSummary(data) {
      return summarize(data, cfg, out, { expected: cfg.requests, atLeast: true, iterations: vus * iterations, extra: FRESH_EXTRA });
    },
  };
}
