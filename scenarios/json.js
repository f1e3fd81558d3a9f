// json: latency of GET /json, a small static JSON document, SAMPLES times on one warm
// connection over PROTO (h1, h1c, h2 or h3; default h2; h3 through k6/x/proxybench/http3), asked for as a
// browser's fetch() does (lib/probes.js FETCH_HEADERS: Accept-Encoding included). Every sample
// must be the upstream's document byte for byte (lib/bodies.js JSON_BODY; setup() first checks
// that the upstream itself, targets.json "upstream", serves it, and the target its size), come
// over PROTO and be uncompressed: k6 decodes a compressed body before the script sees it, so
// only the Content-Encoding shows that the proxy compressed it (lib/probes.js says why that
// makes the run invalid). A body that differs is counted in bad_responses{why:size|body}, and
// where it first differed in body_differs_at. Each sample ends within SAMPLE_TIMEOUT (lib/options.js),
// failed saying why when the target did not answer in time (lib/probes.js failureOf).
import { check } from 'k6';
import http from 'k6/http';
import { client } from './lib/client.js';
import { JSON_BODY } from './lib/bodies.js';
import { countConnection, differsAt, probeTarget, protoOK, requestParams, sameBody } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now } from './lib/metrics.js';
import { SAMPLE_TIMEOUT, probeOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { COMPRESSED, FETCH_HEADERS, countCompressed, countFailure, failureOf, ruleReasons, ruleThresholds } from './lib/probes.js';
import { summarize } from './lib/summary.js';
import { upstreamOrigin } from './lib/targets.js';

const RULES = [COMPRESSED];

const cfg = loadConfig({ scenario: 'json' });
const out = planOutput(cfg);
const params = requestParams(cfg, { headers: FETCH_HEADERS, responseType: 'binary', timeout: SAMPLE_TIMEOUT });

export const options = ruleThresholds(probeOptions(cfg), cfg, RULES);

// assertUpstreamServes checks that the upstream itself, when the targets file names it, serves
// JSON_BODY: if not, lib/bodies.js and the upstream running disagree, and every sample would
// fail for it rather than for the target.
function assertUpstreamServes() {
  const own = upstreamOrigin();
  if (!own) return;
  const res = http.get(own + cfg.route, { responseType: 'binary', timeout: '10s', tags: { probe: 'setup' } });
  if (res.status !== 200) {
    throw new Error(`cannot read ${cfg.route} from the upstream itself at ${own}: ${res.status || res.error}; is the stack up?`);
  }
  const at = differsAt(res.body, JSON_BODY);
  if (at >= 0 || res.body.byteLength !== JSON_BODY.length) {
    throw new Error(
      `the upstream itself at ${own} serves a ${cfg.route} of ${res.body.byteLength} bytes that is not lib/bodies.js's ` +
        `JSON_BODY (${JSON_BODY.length} bytes${at >= 0 ? `, first difference at byte ${at}` : ''}): is bin/upstream ` +
        'built from this clone? (extensions/load/bodies_test.go holds the two together)',
    );
  }
}

export function setup() {
  assertOutput(out);
  assertUpstreamServes();
  return { probed: probeTarget(cfg, { params: { headers: FETCH_HEADERS }, expectBytes: JSON_BODY.length }) };
}

export default function () {
  clockMs.add(now());
  const res = client(cfg).get(cfg.url, params);
  clockMs.add(now());
  countFailure(failureOf(res));
  countConnection(res, cfg);
  const rightProto = protoOK(res, cfg);
  const encoding = countCompressed(res);
  // decoded, when it came compressed: the document the upstream sent, byte for byte
  const sameDoc = sameBody(res.body, JSON_BODY);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'not compressed (no Content-Encoding)': () => encoding === '',
    [`body is the upstream's ${JSON_BODY.length}-byte document`]: () => sameDoc,
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  });
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    expected: cfg.samples,
    bodyBytes: JSON_BODY.length,
    invalid: (d, result) => ruleReasons(d, result, cfg, RULES),
  });
}
