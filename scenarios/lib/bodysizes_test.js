// Unit tests of the body-size sweep's checks (lib/bodysizes.js, checks.js samePattern), run by
// scenarios/bodysizes_test.go with bin/k6 (any k6 runs it: it sends no request). Each case is a
// check of its own; handleSummary prints what the Go test asserts: the cases, those that failed
// and the metrics the checks recorded (bad_responses{why}, body_differs_at, body_cut).
import { check } from 'k6';
import { pattern } from './bodies.js';
import { answerOf, checkAnswer, cutShort, MAX_BODY_BYTES, sizeOf } from './bodysizes.js';
import { CASE, caseResults } from './cases.js';
import { samePattern } from './checks.js';

export const options = {
  iterations: 1,
  summaryTrendStats: ['count', 'min', 'avg', 'max'],
  thresholds: {
    // named so that k6 keeps them for handleSummary
    'bad_responses{why:status}': ['count>=0'],
    'bad_responses{why:size}': ['count>=0'],
    'bad_responses{why:body}': ['count>=0'],
    body_differs_at: ['max>=0'],
    body_cut: ['count>=0'],
  },
};

function expect(name, got, want) {
  check(got, { [`${CASE}${name}: got ${got}, want ${want}`]: (g) => g === want });
}

// rewrite is s with the byte at i changed, as a proxy that rewrites bytes and keeps the length
// would send it.
function rewrite(s, i) {
  return s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ 0x20) + s.slice(i + 1);
}

// throws tells whether f throws an error whose message contains want.
function throws(f, want) {
  try {
    f();
  } catch (e) {
    return String(e.message).includes(want);
  }
  return false;
}

const MIB = 1024 * 1024;

function cfgOf(direction, bodyBytes) {
  return { mode: 'bodies', direction, bodyBytes, proto: { expected: 'HTTP/1.1', tls: false, quic: false } };
}

function response(status, body, error = '') {
  return { status, proto: status ? 'HTTP/1.1' : '', body, error, timings: { connecting: 0, tls_handshaking: 0 } };
}

export default function () {
  // BODY_BYTES: 0 to 8 MiB, whole bytes
  expect('sizeOf 0', sizeOf('0'), 0);
  expect('sizeOf 8 MiB', sizeOf(String(MAX_BODY_BYTES)), 8 * MIB);
  expect('sizeOf unset: 1 MiB', sizeOf(''), MIB);
  for (const bad of ['-1', '8388609', '1k', '1.5', 'x']) {
    expect(`sizeOf ${bad} refused`, throws(() => sizeOf(bad), 'BODY_BYTES must be a whole number of bytes from 0 to 8388608'), true);
  }

  // samePattern: any size, compared a slice at a time
  const big = pattern(8 * MIB);
  for (const n of [0, 1, 62, 63488, 63489, MIB, 8 * MIB]) {
    expect(`samePattern ${n} bytes`, samePattern(big.slice(0, n), n), true); // nothing recorded
  }
  expect('samePattern byte 6 of 1 MiB', samePattern(rewrite(big.slice(0, MIB), 6), MIB), false); // body at 6
  expect('samePattern byte 63489 of 1 MiB', samePattern(rewrite(big.slice(0, MIB), 63489), MIB), false); // body at 63489
  expect('samePattern the last byte of 8 MiB', samePattern(rewrite(big, 8 * MIB - 1), 8 * MIB), false); // body at 8 MiB - 1
  expect('samePattern a byte short', samePattern(big.slice(0, MIB - 1), MIB), false); // size

  // cutShort: a download that began and ended before its size
  expect('cutShort whole', cutShort(response(200, big.slice(0, MIB)), MIB), false);
  expect('cutShort 200, shorter', cutShort(response(200, big.slice(0, 10)), MIB), true);
  expect('cutShort broken mid-body', cutShort(response(0, big.slice(0, 10), 'unexpected EOF'), MIB), true);
  expect('cutShort never answered', cutShort(response(0, null, 'request timeout'), MIB), false);
  expect('cutShort a 404', cutShort(response(404, 'no'), MIB), false);

  // checkAnswer: one check per answer, why it failed, and body_cut for a download cut short
  const down = cfgOf('download', MIB);
  const downAnswer = answerOf(down);
  expect('answerOf a download', `${downAnswer.check}|${downAnswer.expectBytes}|${downAnswer.expect}`, `200, ${MIB} bytes, HTTP/1.1|${MIB}|undefined`);
  expect('checkAnswer a download', checkAnswer(response(200, big.slice(0, MIB)), down, downAnswer), true);
  expect('checkAnswer a download cut short', checkAnswer(response(200, big.slice(0, 1000)), down, downAnswer), false); // size, cut
  expect('checkAnswer a download broken', checkAnswer(response(0, big.slice(0, 1000), 'unexpected EOF'), down, downAnswer), false); // status, size, cut
  const up = cfgOf('upload', MIB);
  const upAnswer = answerOf(up);
  expect('answerOf an upload', `${upAnswer.check}|${upAnswer.expect}`, `200, upstream received ${MIB} bytes, HTTP/1.1|{"bytes":${MIB}}`);
  expect('checkAnswer an upload', checkAnswer(response(200, `{"bytes":${MIB}}`), up, upAnswer), true);
  expect('checkAnswer an upload cut short', checkAnswer(response(200, '{"bytes":1000000}'), up, upAnswer), false); // body at 9, no cut
}

function count(data, name) {
  const m = data.metrics[name];
  return m ? m.values.count : 0;
}

export function handleSummary(data) {
  const differs = data.metrics.body_differs_at;
  return {
    stdout: JSON.stringify({
      ...caseResults(data),
      bad: Object.fromEntries(['status', 'size', 'body'].map((w) => [w, count(data, `bad_responses{why:${w}}`)])),
      body_differs_at: differs ? differs.values : null,
      body_cut: count(data, 'body_cut'),
    }),
  };
}
