// stream: a chunked body through the target — GET /stream?chunks=4&chunk_bytes=4096&interval_ms=50,
// SAMPLES times on one warm connection over PROTO (h1, h1c, h2 or h3; default h2), with the time
// of every chunk read by k6/x/sse's stream mode (k6/http returns only once the body has ended).
// The upstream flushes each 4 KiB chunk 50 ms after the last: a proxy that streams delivers the
// first within a few ms; one that buffers delivers it with the rest, ~150 ms in. Checked:
// exact total bytes, and the first chunk before half the stream.
import { check } from 'k6';
import sse from 'k6/x/sse';
import { probeTarget, protoOK } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now } from './lib/metrics.js';
import { probeOptions } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { summarize } from './lib/summary.js';

const CHUNKS = 4;
const CHUNK_BYTES = 4096;
const INTERVAL_MS = 50;
const TOTAL = CHUNKS * CHUNK_BYTES;

const cfg = loadConfig({ scenario: 'stream', mode: 'probe', route: '/stream' });
const out = planOutput(cfg);
const url = `${cfg.url}?chunks=${CHUNKS}&chunk_bytes=${CHUNK_BYTES}&interval_ms=${INTERVAL_MS}`;
// http3: over h3, k6/x/sse sends through the VU's k6/x/http3 connections (k6's own transport
// speaks h1 and h2 only)
const params = { tags: { route: cfg.route, name: cfg.url }, timeout: '10s', http3: cfg.proto.quic };

export const options = probeOptions(cfg, { trends: ['stream_first_chunk'] });

export function setup() {
  assertOutput(out);
  return { probed: probeTarget(cfg, { path: `${cfg.route}?chunks=2&chunk_bytes=16&interval_ms=0`, expectBytes: 32 }) };
}

export default function () {
  clockMs.add(now());
  const res = sse.stream(url, params);
  clockMs.add(now());
  const rightProto = protoOK(res, cfg);
  check(res, {
    'status is 200': (r) => r.status === 200,
    [`body is ${TOTAL} bytes`]: (r) => r.bytes === TOTAL,
    'first chunk before half the stream (not buffered)': (r) =>
      r.first_chunk_ms !== null && r.first_chunk_ms < r.duration_ms / 2,
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  });
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    expected: cfg.samples,
    noTimings: true,
    extra: { stream_first_chunk: 'stream_first_chunk' },
  });
}
