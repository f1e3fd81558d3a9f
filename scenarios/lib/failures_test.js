// Unit tests of probes.js's failureOf and countFailure on responses as k6/http,
// k6/x/proxybench/http3 and k6/x/proxybench/sse return them (status, error, error_code,
// first_byte_ms), run by scenarios/probes_test.go with bin/k6 (it sends no request). Each case
// is a check of its own: "case: <name>: …". handleSummary prints the cases, those that failed,
// and what countFailure counted in probe_failures{why}.
import { check } from 'k6';
import { CASE, caseResults } from './cases.js';
import { FAILURE_WHY } from './options.js';
import { countFailure, failureOf } from './probes.js';

export const options = {
  iterations: 1,
  // named so that k6 keeps them for handleSummary
  thresholds: Object.fromEntries(FAILURE_WHY.map((w) => [`probe_failures{why:${w}}`, ['count>=0']])),
};

// Each case: a response, and why failureOf must say it failed ('' for none).
const CASES = [
  { name: 'answered', res: { status: 200, error: '', error_code: 0 }, why: '' },
  { name: 'a 502 is an answer (its check fails)', res: { status: 502, error: '', error_code: 0 }, why: '' },
  {
    name: 'no head within the timeout',
    res: { status: 0, error: 'request timeout', error_code: 1050, timings: { waiting: 10000, receiving: 0 } },
    why: 'timeout',
  },
  {
    name: 'the head, then a body that stalls',
    res: { status: 0, error: 'request timeout', error_code: 1050, timings: { waiting: 1.2, receiving: 9998.8 } },
    why: 'stalled',
  },
  {
    name: 'sse: no head within the timeout',
    res: { status: 0, error: 'request timeout', error_code: 1050, first_byte_ms: null },
    why: 'timeout',
  },
  {
    name: 'sse: the head, then a stall',
    res: { status: 0, error: 'request timeout', error_code: 1050, first_byte_ms: 1.4 },
    why: 'stalled',
  },
  { name: 'h3: the QUIC handshake never ended', res: { status: 0, error: 'dial: i/o timeout', error_code: 1211 }, why: 'timeout' },
  { name: 'refused', res: { status: 0, error: 'dial: connection refused', error_code: 1212 }, why: 'refused' },
  { name: 'reset', res: { status: 0, error: 'read: connection reset by peer', error_code: 1220 }, why: 'reset' },
  { name: 'broken pipe', res: { status: 0, error: 'write: broken pipe', error_code: 1201 }, why: 'reset' },
  { name: 'untrusted certificate', res: { status: 0, error: 'x509: unknown authority', error_code: 1310 }, why: 'tls' },
  { name: 'a TLS alert', res: { status: 0, error: 'tls: handshake failure', error_code: 1300 }, why: 'tls' },
  { name: 'an HTTP/2 GOAWAY', res: { status: 0, error: 'http2: GOAWAY', error_code: 1610 }, why: 'other' },
  { name: 'an error without a code', res: { status: 0, error: 'unexpected EOF', error_code: 0 }, why: 'other' },
];

export default function () {
  for (const c of CASES) {
    const got = countFailure(failureOf(c.res));
    check(got, { [`${CASE}${c.name}: got "${got}", want "${c.why}"`]: (g) => g === c.why });
  }
  // k6/x/proxybench/ws says its own why: counted as it is
  countFailure('no_welcome');
}

export function handleSummary(data) {
  const counted = {};
  for (const w of FAILURE_WHY) {
    const m = data.metrics[`probe_failures{why:${w}}`];
    if (m && m.values.count) counted[w] = m.values.count;
  }
  return { stdout: JSON.stringify({ ...caseResults(data), counted }) };
}
