// stream: a chunked body through the target — GET /stream?chunks=4&chunk_bytes=4096&interval_ms=50,
// SAMPLES times on one warm connection over PROTO (h1, h1c, h2 or h3; default h2), with the time
// of every read of the body by k6/x/proxybench/sse's stream mode (k6/http returns only once the body has
// ended). It asks as a browser's fetch() does (lib/probes.js FETCH_HEADERS: Accept-Encoding
// included), so a proxy that compresses or holds back streamed bodies for browsers is caught.
// The upstream flushes each 4 KiB chunk 50 ms after the last, the first at once, uncompressed.
// Each response must be: uncompressed, exactly 16 KiB (decoded, if it came compressed), the first
// chunk whole within 25 ms of the request, each gap between whole chunks within 50 ± 25 ms
// (lib/probes.js says why these figures); a breach fails a check and is counted in
// probe_violations{why}, and the result says which rule and by how much.
// The bytes: k6/x/proxybench/sse times and counts a stream's bytes but hands none of them to the
// script, so setup() reads the same stream whole (no interval) through the target with the
// client of PROTO and stops the test unless each chunk is the upstream's pattern prefix
// (lib/bodies.js streamChunk); the samples are held to its size.
'use k6 with k6/x/proxybench/sse';
import { check } from 'k6';
import { streamChunk } from './lib/bodies.js';
import { probeTarget, protoOK } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { extension } from './lib/extension.js';
import { clockMs, now } from './lib/metrics.js';
import { probeOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import {
  COMPRESSED,
  FETCH_HEADERS,
  PACING_WHY,
  chunkArrivals,
  countCompressed,
  judgePacing,
  pacing,
  ruleReasons,
  ruleThresholds,
  streamParams,
} from './lib/probes.js';
import { summarize } from './lib/summary.js';

const sse = extension('k6/x/proxybench/sse');

const CHUNKS = 4;
const CHUNK_BYTES = 4096;
const INTERVAL_MS = 50;
const TOTAL = CHUNKS * CHUNK_BYTES;
const RULE = pacing(INTERVAL_MS);
const RULES = [COMPRESSED, ...PACING_WHY];

const cfg = loadConfig({ scenario: 'stream', client: 'k6/x/proxybench/sse' });
const out = planOutput(cfg);
const url = `${cfg.url}?chunks=${CHUNKS}&chunk_bytes=${CHUNK_BYTES}&interval_ms=${INTERVAL_MS}`;
const params = streamParams(cfg, FETCH_HEADERS);

export const options = ruleThresholds(probeOptions(cfg, { trends: ['stream_first_chunk'] }), cfg, RULES);

export function setup() {
  assertOutput(out);
  return {
    probed: probeTarget(cfg, {
      path: `${cfg.route}?chunks=${CHUNKS}&chunk_bytes=${CHUNK_BYTES}&interval_ms=0`,
      params: { headers: FETCH_HEADERS },
      expectBody: streamChunk(CHUNK_BYTES).repeat(CHUNKS),
    }),
  };
}

export default function () {
  clockMs.add(now());
  const res = sse.stream(url, params);
  clockMs.add(now());
  const rightProto = protoOK(res, cfg);
  const encoding = countCompressed(res);
  const checks = {
    'status is 200': (r) => r.status === 200,
    'not compressed (no Content-Encoding)': () => encoding === '',
    // decoded, when it came compressed: every byte the upstream sent, no more
    [`body is ${TOTAL} bytes`]: (r) => r.bytes === TOTAL,
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  };
  // a failed response is already counted (http_req_failed), and has no timing to judge; a
  // compressed one is judged on its decoded bytes (lib/probes.js)
  if (res.status === 200) {
    const paced = judgePacing(chunkArrivals(res, CHUNK_BYTES), RULE);
    checks[`first chunk within ${RULE.slack} ms`] = () => paced.first;
    checks[`chunks ${INTERVAL_MS} ± ${RULE.slack} ms apart`] = () => paced.gaps;
  }
  check(res, checks);
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    expected: cfg.samples,
    noTimings: true,
    extra: { stream_first_chunk: 'stream_first_chunk' },
    invalid: (d, result) => ruleReasons(d, result, cfg, RULES, { one: 'chunk', many: 'chunks' }, RULE),
  });
}
