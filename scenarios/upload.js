// upload: latency of POST /upload with an UPLOAD_BYTES body (default 256 KiB, built once in
// the init context), SAMPLES times on one warm connection over PROTO (h1, h1c, h2 or h3;
// default h2; h3 through k6/x/proxybench/http3). The upstream replies {"bytes":N}: N must be exactly what
// was sent, so a proxy that truncates or mangles the body fails the check. Each sample ends
// within SAMPLE_TIMEOUT (lib/options.js), failed saying why when the target did not answer in time.
import { check } from 'k6';
import { client } from './lib/client.js';
import { bodyText, countConnection, probeTarget, protoOK, requestParams } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now } from './lib/metrics.js';
import { SAMPLE_TIMEOUT, probeOptions } from './lib/options.js';
import { countFailure, failureOf } from './lib/probes.js';
import { assertOutput, planOutput } from './lib/output.js';
import { summarize } from './lib/summary.js';

const cfg = loadConfig({ scenario: 'upload' });
if (cfg.target.uploadLimit && cfg.uploadBytes > cfg.target.uploadLimit) {
  throw new Error(
    `UPLOAD_BYTES ${cfg.uploadBytes} is over the targets' upload limit of ${cfg.target.uploadLimit} bytes ` +
      '(upload_limit_bytes in the targets file)',
  );
}
const out = planOutput(cfg);

// A deterministic body, the same every sample: bytes 0..255 repeated.
const body = new Uint8Array(cfg.uploadBytes);
for (let i = 0; i < body.length; i++) body[i] = i & 0xff;
const payload = body.buffer;
const params = requestParams(cfg, { headers: { 'Content-Type': 'application/octet-stream' }, timeout: SAMPLE_TIMEOUT });

export const options = probeOptions(cfg);

export function setup() {
  assertOutput(out);
  const probed = probeTarget(cfg, {
    method: 'POST',
    body: payload,
    params: { headers: params.headers },
    verify: (res) => {
      const n = receivedBytes(res);
      if (n === cfg.uploadBytes) return '';
      return `the upstream got ${n} bytes of ${cfg.uploadBytes} (reply: ${bodyText(res.body).slice(0, 100)})`;
    },
  });
  return { probed };
}

// receivedBytes reads the upstream's {"bytes":N}; -1 when the reply isn't that.
function receivedBytes(res) {
  try {
    const n = JSON.parse(bodyText(res.body)).bytes;
    return Number.isInteger(n) ? n : -1;
  } catch {
    return -1;
  }
}

export default function () {
  clockMs.add(now());
  const res = client(cfg).post(cfg.url, payload, params);
  clockMs.add(now());
  countFailure(failureOf(res));
  countConnection(res, cfg);
  const rightProto = protoOK(res, cfg);
  check(res, {
    'status is 200': (r) => r.status === 200,
    [`upstream received ${cfg.uploadBytes} bytes`]: (r) => receivedBytes(r) === cfg.uploadBytes,
    [`proto is ${cfg.proto.expected}`]: () => rightProto,
  });
}

export function handleSummary(data) {
  return summarize(data, cfg, out, { expected: cfg.samples });
}
