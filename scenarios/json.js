// json: latency of GET /json, a small static JSON document, SAMPLES times on one warm
// connection over PROTO (h1, h1c, h2 or h3; default h2; h3 through k6/x/http3). setup() learns
// the document's size from the target; every sample must be that exact size, parse as JSON, and
// come over PROTO.
import { check } from 'k6';
import { client } from './lib/client.js';
import { bodyBytes, bodyText, countConnection, probeTarget, protoOK, requestParams } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now } from './lib/metrics.js';
import { probeOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { summarize } from './lib/summary.js';

const cfg = loadConfig({ scenario: 'json', mode: 'probe', route: '/json' });
const out = planOutput(cfg);
const params = requestParams(cfg);

export const options = probeOptions(cfg);

export function setup() {
  assertOutput(out);
  return { probed: probeTarget(cfg) };
}

function parses(body) {
  try {
    return typeof JSON.parse(bodyText(body)) === 'object';
  } catch (e) {
    return false;
  }
}

export default function (data) {
  clockMs.add(now());
  const res = client(cfg).get(cfg.url, params);
  clockMs.add(now());
  countConnection(res, cfg);
  const rightProto = protoOK(res, cfg);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'body is the size setup() saw': (r) => bodyBytes(r.body) === data.probed.bytes,
    'body is a JSON object': (r) => parses(r.body),
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  });
}

export function handleSummary(data) {
  return summarize(data, cfg, out, { expected: cfg.samples });
}
