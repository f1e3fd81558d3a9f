// json: latency of GET /json, a small static JSON document, SAMPLES times on one warm
// connection over PROTO (h1, h1c, h2 or h3; default h2; h3 through k6/x/proxybench/http3), asked for as a
// browser's fetch() does (lib/probes.js FETCH_HEADERS: Accept-Encoding included). setup() reads
// the document's size from the upstream itself (targets.json "upstream"), so that a proxy that
// alters it fails there; every sample must be that exact size, parse as JSON,
// come over PROTO and be uncompressed: k6 decodes a compressed body before the script sees it,
// so only the Content-Encoding shows that the proxy compressed it (lib/probes.js says why that
// makes the run invalid).
import { check } from 'k6';
import http from 'k6/http';
import { client } from './lib/client.js';
import { bodyBytes, bodyText, countConnection, probeTarget, protoOK, requestParams } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now } from './lib/metrics.js';
import { probeOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { COMPRESSED, FETCH_HEADERS, countCompressed, ruleReasons, ruleThresholds } from './lib/probes.js';
import { summarize } from './lib/summary.js';
import { upstreamOrigin } from './lib/targets.js';

const RULES = [COMPRESSED];

const cfg = loadConfig({ scenario: 'json' });
const out = planOutput(cfg);
const params = requestParams(cfg, { headers: FETCH_HEADERS });

export const options = ruleThresholds(probeOptions(cfg), cfg, RULES);

// upstreamBytes is the size of the upstream's own /json, or undefined when the targets file
// names no upstream (the target's answer then sets the size).
function upstreamBytes() {
  const own = upstreamOrigin();
  if (!own) return undefined;
  const res = http.get(own + cfg.route, { responseType: 'binary', timeout: '10s', tags: { probe: 'setup' } });
  if (res.status !== 200) {
    throw new Error(`cannot read ${cfg.route} from the upstream itself at ${own}: ${res.status || res.error}; is the stack up?`);
  }
  return bodyBytes(res.body);
}

export function setup() {
  assertOutput(out);
  return { probed: probeTarget(cfg, { params: { headers: FETCH_HEADERS }, expectBytes: upstreamBytes() }) };
}

function parses(body) {
  try {
    return typeof JSON.parse(bodyText(body)) === 'object';
  } catch {
    return false;
  }
}

export default function (data) {
  clockMs.add(now());
  const res = client(cfg).get(cfg.url, params);
  clockMs.add(now());
  countConnection(res, cfg);
  const rightProto = protoOK(res, cfg);
  const encoding = countCompressed(res);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'not compressed (no Content-Encoding)': () => encoding === '',
    'body is the size setup() saw': (r) => bodyBytes(r.body) === data.probed.bytes,
    'body is a JSON object': (r) => parses(r.body),
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  });
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    expected: cfg.samples,
    invalid: (d, result) => ruleReasons(d, result, cfg, RULES),
  });
}
