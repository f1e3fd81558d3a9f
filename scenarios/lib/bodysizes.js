// The body-size sweep (catalogue mode "bodies"): bodies-down, GET /bytes?size=BODY_BYTES, and
// bodies-up, POST /upload of BODY_BYTES, one size per run (make bench MODES=bodies runs every
// size of BODY_SIZES). Each run is a closed model as a reused cell is: CONNECTIONS VUs, each one
// kept-alive connection sending one request after another for DURATION after an unmeasured
// WARMUP. Over h2 and h3 too a connection carries one request at a time: every protocol has the
// same CONNECTIONS bodies in flight, and at 8 MiB the client holds at most CONNECTIONS of them.
// Every answer is checked: a download's body byte for byte against the upstream's pattern
// (never built whole: checks.js samePattern, the native loop's expectRepeat), an upload's answer
// against {"bytes":BODY_BYTES}, the upstream's count of what it received. The result says what
// the run moved (result.body: direction, bytes, MB/s); the runner adds the target's CPU per MB.
import { check } from 'k6';
import { PATTERN, pattern } from './bodies.js';
import {
  bodyBytes,
  countConnection,
  probeTarget,
  protoOK,
  requestParams,
  rootCheckName,
  sameBody,
  samePattern,
} from './checks.js';
import { client } from './client.js';
import { loadConfig } from './config.js';
import { badResponses, bodyCut } from './metrics.js';
import { reusedOptions } from './options.js';
import { assertOutput, planOutput } from './output.js';
import { summarize } from './summary.js';
import { closedIteration, lateCounter } from './window.js';

// MAX_BODY_BYTES is the largest body: /bytes serves up to 8 MiB (extensions/upstream MaxBytes),
// and the upstream takes uploads up to its upload limit, the same 8 MiB by default.
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

// DEFAULT_BODY_BYTES is a run's size without BODY_BYTES (make k6 SCENARIO=bodies-down).
export const DEFAULT_BODY_BYTES = 1024 * 1024;

// BODY_TIMEOUT_MS bounds every request of the sweep, whatever its size: a target that stalls a
// body fails that request within it (counted in body_cut), where k6's 60 s would hold the run
// past its DURATION with nothing measured. 8 MiB over 32 connections takes well under a second
// here through any target.
export const BODY_TIMEOUT_MS = 10000;

// sizeOf is BODY_BYTES: a whole number of bytes from 0 to MAX_BODY_BYTES.
export function sizeOf(value = __ENV.BODY_BYTES) {
  if (value === undefined || value === '') return DEFAULT_BODY_BYTES;
  const v = String(value).trim();
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > MAX_BODY_BYTES) {
    throw new Error(`BODY_BYTES must be a whole number of bytes from 0 to ${MAX_BODY_BYTES}, got "${value}"`);
  }
  return n;
}

// bodiesConfig is loadConfig's configuration of a sweep's script, with its body: direction
// (download for /bytes, upload for /upload), bytes, and the URL every request goes to.
export function bodiesConfig({ scenario, client: clientName }) {
  const cfg = loadConfig({ scenario, client: clientName });
  cfg.bodyBytes = sizeOf();
  cfg.direction = cfg.route === '/upload' ? 'upload' : 'download';
  if (cfg.direction === 'download') {
    cfg.url = `${cfg.origin}${cfg.route}?size=${cfg.bodyBytes}`;
  } else if (cfg.target.uploadLimit && cfg.bodyBytes > cfg.target.uploadLimit) {
    throw new Error(
      `BODY_BYTES ${cfg.bodyBytes} is over the targets' upload limit of ${cfg.target.uploadLimit} bytes ` +
        '(upload_limit_bytes in the targets file)',
    );
  }
  return cfg;
}

// answerOf is what every answer of the run must be: its body (an upload's {"bytes":N}) or, for a
// download, its size and the text it repeats; and the name of the one check it is counted in.
export function answerOf(cfg) {
  if (cfg.direction === 'download') {
    return { expectBytes: cfg.bodyBytes, expectRepeat: PATTERN, check: rootCheckName(cfg, cfg.bodyBytes) };
  }
  const expect = `{"bytes":${cfg.bodyBytes}}`;
  return { expectBytes: expect.length, expect, check: `200, upstream received ${cfg.bodyBytes} bytes, ${cfg.proto.expected}` };
}

// checkAnswer verifies one answer of a k6/http (or k6/x/proxybench/http3) run as the native loop
// does: one check (status 200, the body, the protocol), why it failed in bad_responses{why}, and
// a download's body that ended short in body_cut.
export function checkAnswer(res, cfg, answer) {
  countConnection(res, cfg);
  const rightProto = protoOK(res, cfg);
  const okStatus = res.status === 200;
  const okBody = answer.expect === undefined ? samePattern(res.body, cfg.bodyBytes) : sameBody(res.body, answer.expect);
  if (!okStatus) badResponses.add(1, { why: 'status' });
  if (!rightProto) badResponses.add(1, { why: 'proto' });
  if (cfg.direction === 'download' && cutShort(res, cfg.bodyBytes)) bodyCut.add(1);
  return check(res, { [answer.check]: () => okStatus && okBody && rightProto });
}

// cutShort tells whether a download's answer began and its body ended before n bytes: a 200
// with fewer, or an error after some of it (the native loop's rule, extensions/load record.go).
export function cutShort(res, n) {
  const got = bodyBytes(res.body);
  return got < n && (res.status === 200 || (!!res.error && got > 0));
}

// bodiesScenario builds a sweep's script. nativeLoop, when given (scenarios/native/), makes the
// VU's native loop for h1c, h1 and h2; h3 (and CLIENT=k6) sends through k6/http's API.
export function bodiesScenario({ scenario, nativeLoop }) {
  const native = !!nativeLoop;
  const cfg = bodiesConfig({ scenario, client: native ? 'native' : undefined });
  if (native && cfg.proto.quic) cfg.client = 'k6/x/proxybench/http3';
  const out = planOutput(cfg);
  const answer = answerOf(cfg);
  const options = reusedOptions(cfg);
  const spec = { body: { direction: cfg.direction, bytes: cfg.bodyBytes }, bodyBytes: answer.expectBytes };
  return {
    options,
    setup: () => setupBodies(cfg, out),
    iteration: native && !cfg.proto.quic ? nativeIteration(cfg, nativeLoop, answer) : k6Iteration(cfg, answer),
    handleSummary: (data) => summarize(data, cfg, out, spec),
  };
}

function nativeIteration(cfg, nativeLoop, answer) {
  const request = { ...answer, timeout: BODY_TIMEOUT_MS };
  if (cfg.direction === 'upload') {
    Object.assign(request, { method: 'POST', uploadBytes: cfg.bodyBytes, uploadText: PATTERN });
  }
  return closedIteration(cfg, nativeLoop(cfg, request));
}

// k6Iteration sends one request per iteration through the protocol's client (k6/http, or
// k6/x/proxybench/http3 for h3). An upload's body is built once per VU, a string (k6 sends its
// bytes, ASCII); a download's body comes as text, compared a slice at a time.
function k6Iteration(cfg, answer) {
  const http = client(cfg);
  const ended = lateCounter(cfg);
  const upload = cfg.direction === 'upload';
  const params = requestParams(cfg, {
    timeout: `${BODY_TIMEOUT_MS}ms`,
    ...(upload ? { headers: { 'Content-Type': 'application/octet-stream' } } : {}),
  });
  const payload = upload ? pattern(cfg.bodyBytes) : null;
  return () => {
    const res = upload ? http.post(cfg.url, payload, params) : http.get(cfg.url, params);
    checkAnswer(res, cfg, answer);
    ended(1);
  };
}

// SETUP_DOWNLOAD_BYTES is the most a download's setup probe asks for: enough to prove the route,
// the protocol and the size it answers with.
export const SETUP_DOWNLOAD_BYTES = 1024;

// setupBodies probes the target once before any load: a download of BODY_BYTES, SETUP_DOWNLOAD_BYTES
// at most, of the exact size, or the run's own upload, which the upstream must count whole. A
// download is probed small so that a target that cuts large bodies short is judged by the run
// (each answer checked, body_cut counted, "body cut short in N responses"), not stopped in setup
// as if unreachable: its broken connection reads "cannot reach target" there.
function setupBodies(cfg, out) {
  assertOutput(out);
  if (cfg.direction === 'download') {
    const n = Math.min(cfg.bodyBytes, SETUP_DOWNLOAD_BYTES);
    return { probed: probeTarget(cfg, { path: `${cfg.route}?size=${n}`, expectBytes: n }) };
  }
  const want = answerOf(cfg).expect;
  return {
    probed: probeTarget(cfg, {
      method: 'POST',
      body: pattern(cfg.bodyBytes),
      params: { headers: { 'Content-Type': 'application/octet-stream' } },
      expectBody: want,
    }),
  };
}
