// The reused scenarios on our native load loop (k6/x/proxybench/load): the same options,
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
import { reusedOptions } from './options.js';
import { planOutput } from './output.js';
import { setupRoot } from './scenario.js';
import { summarize } from './summary.js';

export const NATIVE_CLIENT = 'native';

const load = extension('k6/x/proxybench/load');

// nativeScenario builds reused-<proto> for h1c, h1 or h2 on the native loop.
export function nativeScenario({ scenario }) {
  const cfg = loadConfig({ scenario, client: NATIVE_CLIENT });
  const out = planOutput(cfg);
  const loop = load.client({
    url: cfg.url,
    proto: cfg.proto.name,
    streams: cfg.proto.mux ? cfg.streams : 1,
    expectBytes: ROOT_BYTES,
    expect: ROOT_BODY, // compared as it is read (lib/bodies.js)
    check: rootCheckName(cfg),
    tags: requestParams(cfg).tags,
  });
  return {
    options: reusedOptions(cfg),
    setup: () => setupRoot(cfg, out),
    // One call runs to the end of the k6 scenario the VU is in (warm-up or measured): the loop
    // stops sending then and counts what ends after it in late_requests (window.js's rule).
    iteration() {
      const sc = exec.scenario;
      const lengthS = sc.name === cfg.k6Scenario ? cfg.durationS : cfg.warmupS;
      loop.run(sc.startTime + lengthS * 1000);
    },
    handleSummary(data) {
      return summarize(data, cfg, out);
    },
  };
}
