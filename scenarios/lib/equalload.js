// The equal-load scenario, on either client: equal-load.js (k6/http's constant-arrival-rate,
// for a stock k6 and k6 cloud) and native/equal-load.js (the native open-model loop for h1c, h1
// and h2; h3 keeps k6's batches there too).
import exec from 'k6/execution';
import { checkRoot, requestParams } from './checks.js';
import { client } from './client.js';
import { loadConfig } from './config.js';
import { equalLoadOptions, equalLoadPlan, reusedOptions, sel } from './options.js';
import { planOutput } from './output.js';
import { batchSender, setupRoot } from './scenario.js';
import { summarize } from './summary.js';

// equalLoadScenario builds the script. nativeLoop, when given, makes the VU's loop for the
// native open model (lib/native.js); it runs h1c, h1 and h2 (not h3: QUIC is not its).
export function equalLoadScenario({ scenario, nativeLoop }) {
  const cfg = loadConfig({ scenario });
  if (nativeLoop && !cfg.proto.quic) {
    return openModel(cfg, nativeLoop);
  }
  const out = planOutput(cfg);
  const params = requestParams(cfg);
  const plan = equalLoadPlan(cfg);
  const http = client(cfg);
  // h2/h3: a batch of STREAMS requests per iteration, as in the reused cells
  const sendBatch = cfg.proto.mux ? batchSender(cfg, http) : null;
  return {
    options: equalLoadOptions(cfg, plan),
    setup: () => setupRoot(cfg, out),
    iteration() {
      if (sendBatch) {
        sendBatch();
      } else {
        checkRoot(http.get(cfg.url, params), cfg);
      }
    },
    handleSummary(data) {
      // the connections are held to one per VU that k6 ran, as the reused cells' are
      const vus = data.metrics.vus_max ? data.metrics.vus_max.values.max : plan.maxVUs;
      return summarize(data, cfg, out, { vus, arrival: plan });
    },
  };
}

// openModel: CONNECTIONS VUs, each one kept-alive connection (opened in the warm-up) on which
// the native loop sends RATE/CONNECTIONS requests a second on a fixed schedule, the VUs'
// schedules interleaved so that the requests are due evenly, RATE a second in all. Latency is
// measured from when each request was due (k6/x/proxybench/load's open()). Over h2 each
// request is a stream of its own, sent when due whatever is in flight on the connection.
function openModel(cfg, nativeLoop) {
  cfg.client = 'native';
  const out = planOutput(cfg);
  const loop = nativeLoop(cfg);
  const rate = equalLoadPlan(cfg).rate;
  const vus = cfg.connections;
  const plan = { rate, perIteration: 1, preVUs: vus, maxVUs: vus, native: true };
  const options = reusedOptions(cfg);
  options.thresholds[`behind_schedule${sel(cfg)}`] = ['count>=0'];
  options.thresholds[`start_lag${sel(cfg)}`] = ['max>=0'];
  return {
    options,
    setup: () => setupRoot(cfg, out),
    iteration() {
      const sc = exec.scenario;
      const lengthS = sc.name === cfg.k6Scenario ? cfg.durationS : cfg.warmupS;
      // VU i's requests are due at start + (i + k * vus) / rate, k = 0, 1, …
      const i = (exec.vu.idInTest - 1) % vus;
      loop.open(sc.startTime + (i * 1000) / rate, sc.startTime + lengthS * 1000, rate / vus);
    },
    handleSummary: (data) => summarize(data, cfg, out, { vus, arrival: plan }),
  };
}
