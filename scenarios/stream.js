// stream: a chunked body through the target — GET /stream?chunks=4&chunk_bytes=4096&interval_ms=50,
// SAMPLES times on one warm connection over PROTO (h1, h1c, h2 or h3; default h2), with the time
// of every read of the body by k6/x/proxybench/sse's stream mode (k6/http returns only once the body has
// ended). It asks as a browser's fetch() does (lib/probes.js FETCH_HEADERS: Accept-Encoding
// included), so a proxy that compresses or holds back streamed bodies for browsers is caught.
// The upstream flushes each 4 KiB chunk no sooner than 50 ms after the last, the first at once,
// uncompressed. Each response must be uncompressed and exactly 16 KiB (decoded, if it came
// compressed): checks. And the cell must not be held back: in more than half the responses, the
// first chunk whole later than 50 ms after the request (after the upstream sent the second), or
// two whole chunks less than 5 ms apart (released together); lib/probes.js says why these rules
// and figures. Each response's timing goes to probe_held_back{why} and the result's pacing
// block, which the verdict judges and says which rule and by how much. A stall (one long gap)
// is a figure: the result's gap max, and pacing.stalls.
// The bytes: every response must be the upstream's, byte for byte: CHUNKS times its pattern's
// prefix (lib/bodies.js streamChunk). k6/x/proxybench/sse hands the script none of a stream's
// bytes, so it is given them (its expect param) and holds each read to the expected bytes at its
// offset as it reads, keeping none; its result says where the first differing byte was
// (body_differs_at, -1 for none). A body of another size counts in bad_responses{why:size}, one
// of the right size that differs in bad_responses{why:body}, with that offset in
// body_differs_at, and either fails the body's check. setup() first reads the same stream whole
// (no interval) through the target with the client of PROTO and stops the test unless it is
// the upstream's.
// Each sample ends within SAMPLE_TIMEOUT (lib/options.js): one whose target never answers fails
// as a timeout, one that stalls mid-body as stalled (lib/probes.js failureOf), and the next starts.
'use k6 with k6/x/proxybench/sse';
import { check } from 'k6';
import { streamChunk } from './lib/bodies.js';
import { probeTarget, protoOK } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { extension } from './lib/extension.js';
import { badResponses, bodyDiffersAt, clockMs, now, streamChunkGap } from './lib/metrics.js';
import { probeOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import {
  COMPRESSED,
  FETCH_HEADERS,
  chunkArrivals,
  countCompressed,
  countFailure,
  failureOf,
  judgePacing,
  pacingOf,
  pacingThresholds,
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
// the whole body the upstream sends, TOTAL bytes: made once, compared with every response
const BODY = streamChunk(CHUNK_BYTES).repeat(CHUNKS);
const RULE = pacing(INTERVAL_MS);
const RULES = [COMPRESSED];

const cfg = loadConfig({ scenario: 'stream', client: 'k6/x/proxybench/sse' });
const out = planOutput(cfg);
const url = `${cfg.url}?chunks=${CHUNKS}&chunk_bytes=${CHUNK_BYTES}&interval_ms=${INTERVAL_MS}`;
const params = { ...streamParams(cfg, FETCH_HEADERS), expect: BODY };

export const options = pacingThresholds(ruleThresholds(probeOptions(cfg, { trends: ['stream_first_chunk', 'stream_chunk_gap'] }), cfg, RULES), cfg);

export function setup() {
  assertOutput(out);
  return {
    probed: probeTarget(cfg, {
      path: `${cfg.route}?chunks=${CHUNKS}&chunk_bytes=${CHUNK_BYTES}&interval_ms=0`,
      params: { headers: FETCH_HEADERS },
      expectBody: BODY,
    }),
  };
}

export default function () {
  clockMs.add(now());
  const res = sse.stream(url, params);
  clockMs.add(now());
  countFailure(failureOf(res));
  const rightProto = protoOK(res, cfg);
  const encoding = countCompressed(res);
  const sameBytes = sameStream(res);
  const checks = {
    'status is 200': (r) => r.status === 200,
    'not compressed (no Content-Encoding)': () => encoding === '',
    // decoded, when it came compressed: every byte the upstream sent, no more, each the
    // upstream's (the name still says only the size: the results know the check by it)
    [`body is ${TOTAL} bytes`]: () => sameBytes,
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  };
  check(res, checks);
  // A failed response is already counted (http_req_failed), and has no timing to judge; a
  // compressed one is judged on its decoded bytes (lib/probes.js). The timing is not a
  // check: one response held back is what a busy machine makes too, and the verdict judges
  // the cell on them all (more than half held back), from probe_held_back.
  if (res.status === 200) judgePacing(chunkArrivals(res, CHUNK_BYTES), RULE, streamChunkGap);
}

// sameStream tells whether a response's body was BODY, as lib/checks.js sameBody does for a
// body in hand, from what k6/x/proxybench/sse measured while it read it: its size (bytes), and
// body_differs_at, the first byte that differed from BODY's at its offset (-1: none). When it was
// not, it says why in bad_responses{why}: size for a body of another size (a size mismatch,
// wherever its bytes differ), body for one of TOTAL bytes that differs, with the offset of the
// first that does in body_differs_at.
function sameStream(res) {
  if (res.bytes !== TOTAL) {
    badResponses.add(1, { why: 'size' });
    return false;
  }
  const at = res.body_differs_at;
  if (at === -1) return true;
  badResponses.add(1, { why: 'body' });
  if (at >= 0) bodyDiffersAt.add(at);
  return false;
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    expected: cfg.samples,
    bodyBytes: TOTAL,
    noTimings: true,
    extra: { stream_first_chunk: 'stream_first_chunk', stream_chunk_gap: 'stream_chunk_gap' },
    invalid: (d, result) => ruleReasons(d, result, cfg, RULES),
    pacing: pacingOf(data, cfg, RULE, { one: 'chunk', many: 'chunks' }),
  });
}
