// Unit tests of checks.js's body comparison, run by scenarios/checks_test.go with bin/k6 (any
// k6 runs it: it needs none of proxybench's extensions and sends no request). Each case is a
// check of its own; handleSummary prints what the Go test asserts: the cases, those that failed
// and the metrics the comparison recorded (bad_responses{why}, body_differs_at).
import { check } from 'k6';
import { ROOT_BODY, ROOT_BYTES } from './bodies.js';
import { CASE, caseResults } from './cases.js';
import { bodyBytes, checkRoot, differsAt, sameBody } from './checks.js';

export const options = {
  iterations: 1,
  summaryTrendStats: ['count', 'min', 'avg', 'max'],
  thresholds: {
    // named so that k6 keeps them for handleSummary
    'bad_responses{why:status}': ['count>=0'],
    'bad_responses{why:size}': ['count>=0'],
    'bad_responses{why:body}': ['count>=0'],
    'bad_responses{why:proto}': ['count>=0'],
    body_differs_at: ['max>=0'],
  },
};

// rewrite is s with the byte at i changed, as a proxy that rewrites bytes and keeps the length
// would send it.
function rewrite(s, i) {
  return s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ 0x20) + s.slice(i + 1);
}

// binary is an ASCII string's bytes, as k6/http's responseType 'binary' gives them.
function binary(s) {
  const b = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
  return b.buffer;
}

// response is a k6/http response of GET / over cleartext HTTP/1.1 on a kept-alive connection.
function response(status, body) {
  return { status, proto: 'HTTP/1.1', body, timings: { connecting: 0, tls_handshaking: 0 } };
}

const cfg = { mode: 'reused', proto: { expected: 'HTTP/1.1', tls: false, quic: false } };

// expect is one case: a check named "case: <name>: got …, want …" (handleSummary runs apart
// from the VU, so the cases that failed are read back from the checks).
function expect(name, got, want) {
  check(got, { [`${CASE}${name}: got ${got}, want ${want}`]: (g) => g === want });
}

export default function () {
  // differsAt: the first byte that differs, -1 for none; text and binary alike
  expect('differsAt equal', differsAt(ROOT_BODY, ROOT_BODY), -1);
  for (const at of [0, 6, 61, 62, 2048, ROOT_BYTES - 1]) {
    expect(`differsAt text, byte ${at}`, differsAt(rewrite(ROOT_BODY, at), ROOT_BODY), at);
    expect(`differsAt binary, byte ${at}`, differsAt(binary(rewrite(ROOT_BODY, at)), ROOT_BODY), at);
  }
  expect('differsAt first of two', differsAt(rewrite(rewrite(ROOT_BODY, 3000), 7), ROOT_BODY), 7);
  expect('differsAt a prefix: the size says it', differsAt(ROOT_BODY.slice(0, 100), ROOT_BODY), -1);
  expect('differsAt longer, want a prefix', differsAt(ROOT_BODY + 'x', ROOT_BODY), -1);
  expect('differsAt null body', differsAt(null, ROOT_BODY), -1);
  expect('differsAt a non-ASCII unit', differsAt('01234\u00e9' + ROOT_BODY.slice(7), ROOT_BODY), 5);

  // bodyBytes of a text body: UTF-8, an invalid byte (U+FFFD) one byte
  expect('bodyBytes ASCII', bodyBytes(ROOT_BODY), ROOT_BYTES);
  expect('bodyBytes U+FFFD for an invalid byte', bodyBytes('\ufffd' + ROOT_BODY.slice(1)), ROOT_BYTES);
  expect('bodyBytes 2-byte', bodyBytes('\u00e9'), 2);
  expect('bodyBytes 3-byte', bodyBytes('\u20ac'), 3);
  expect('bodyBytes surrogate pair', bodyBytes('\ud83d\ude00'), 4);
  expect('bodyBytes mixed', bodyBytes('a\u00e9\ufffdb\u20ac\ud83d\ude00'), 1 + 2 + 1 + 1 + 3 + 4);
  expect('bodyBytes binary', bodyBytes(binary(ROOT_BODY)), ROOT_BYTES);
  expect('bodyBytes null', bodyBytes(null), 0);

  // sameBody: why it is not, in bad_responses{why} and body_differs_at
  expect('sameBody equal text', sameBody(ROOT_BODY, ROOT_BODY), true); // nothing recorded
  expect('sameBody equal binary', sameBody(binary(ROOT_BODY), ROOT_BODY), true); // nothing recorded
  expect('sameBody byte 6', sameBody(rewrite(ROOT_BODY, 6), ROOT_BODY), false); // body, at 6
  expect('sameBody an invalid byte at 10', sameBody(ROOT_BODY.slice(0, 10) + '\ufffd' + ROOT_BODY.slice(11), ROOT_BODY), false); // body, at 10
  expect('sameBody short', sameBody(ROOT_BODY.slice(1), ROOT_BODY), false); // size

  // checkRoot: one check per response, every reason counted
  expect('checkRoot equal', checkRoot(response(200, ROOT_BODY), cfg), true);
  expect('checkRoot byte 4095', checkRoot(response(200, rewrite(ROOT_BODY, 4095)), cfg), false); // body, at 4095
  expect('checkRoot long and differing', checkRoot(response(200, rewrite(ROOT_BODY, 1) + 'x'), cfg), false); // size
  expect('checkRoot 503', checkRoot(response(503, ROOT_BODY), cfg), false); // status
  expect('checkRoot failed request', checkRoot(response(0, null), cfg), false); // status, size, proto
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
      bad: Object.fromEntries(['status', 'size', 'body', 'proto'].map((w) => [w, count(data, `bad_responses{why:${w}}`)])),
      body_differs_at: differs ? differs.values : null,
    }),
  };
}
