// Unit tests of probes.js's pacing rules on recorded arrival times (ms since the request), run
// by scenarios/probes_test.go with bin/k6 (it sends no request). Each case is a check of its
// own: "case: <name>: …". handleSummary prints what the Go test asserts: the cases, those that
// failed, and the counts the rules recorded (probe_held_back{why}, probe_stalls).
import { check } from 'k6';
import { CASE, caseResults } from './cases.js';
import { judgePacing, pacing } from './probes.js';

export const options = {
  iterations: 1,
  thresholds: {
    // named so that k6 keeps them for handleSummary
    'probe_held_back{why:first}': ['rate>=0'],
    'probe_held_back{why:burst}': ['rate>=0'],
    probe_stalls: ['count>=0'],
  },
};

// The stream probe's rule (50 ms: first within 50, together under 5, a stall over 75) and
// the sse probe's (150 ms: 150, 15, 187.5).
const STREAM = pacing(50);
const SSE = pacing(150);

// Each case: arrival times, the rule, and what judgePacing must say of them.
//   first, together: the rules held; stall: a gap over the rule's stallOver (a figure only)
const CASES = [
  // what a proxy that passes the stream through delivers on a quiet machine
  { name: 'on the beat', at: [0.8, 51, 101.2, 151.3], rule: STREAM, first: true, together: true, stall: false },
  { name: 'sse on the beat', at: [1.1, 151.4, 302], rule: SSE, first: true, together: true, stall: false },
  // one part late, the rest a whole interval after it: the upstream descheduled (its pacer
  // never sends sooner than the interval)
  { name: 'a stall at the upstream', at: [1, 87, 137, 187], rule: STREAM, first: true, together: true, stall: true },
  // one read late, the next on its time: the client descheduled, the part waiting in its socket
  { name: 'a stall at the client', at: [1, 86.1, 101, 151], rule: STREAM, first: true, together: true, stall: true },
  // the first part read late, by less than an interval
  { name: 'a late first read', at: [38, 51, 101, 151], rule: STREAM, first: true, together: true, stall: false },
  // ±40 ms of noise on every part: a machine far busier than any run should be
  { name: 'jitter of ±40 ms (stream)', at: [40, 52, 140, 152], rule: STREAM, first: true, together: true, stall: true },
  { name: 'jitter of ±40 ms (sse)', at: [39, 111, 340], rule: SSE, first: true, together: true, stall: true },
  // held back and released together
  { name: 'a burst mid-stream', at: [1, 101, 101.3, 151], rule: STREAM, first: true, together: false, stall: true },
  { name: 'released in pairs', at: [51, 51.2, 151, 151.1], rule: STREAM, first: false, together: false, stall: true },
  { name: 'first released with the last', at: [150.2, 150.2, 150.3, 150.3], rule: STREAM, first: false, together: false, stall: false },
  { name: 'sse first released with the last', at: [301, 301, 301.1], rule: SSE, first: false, together: false, stall: false },
  // the first part held past the second's sending, the rest on the beat: a proxy that waits
  // for more than one part before its first flush
  { name: 'first held one interval', at: [62, 101, 151, 201], rule: STREAM, first: false, together: true, stall: false },
  { name: 'no part at all', at: [], rule: STREAM, first: false, together: true, stall: false },
];

function expect(name, got, want) {
  check(got, { [`${CASE}${name}: got ${got}, want ${want}`]: (g) => g === want });
}

export default function () {
  for (const c of CASES) {
    const got = judgePacing(c.at, c.rule);
    expect(`${c.name}: first`, got.first, c.first);
    expect(`${c.name}: together`, got.together, c.together);
    expect(`${c.name}: stall`, got.gapMax !== null && got.gapMax > c.rule.stallOver, c.stall);
  }
  expect('stream together', STREAM.together, 5);
  expect('stream stallOver', STREAM.stallOver, 75);
  expect('sse together', SSE.together, 15);
  expect('sse stallOver', SSE.stallOver, 187.5);
}

function count(data, name) {
  const m = data.metrics[name];
  return m ? m.values.count : 0;
}

// held is how many responses a rule held back, of how many it judged.
function held(data, why) {
  const m = data.metrics[`probe_held_back{why:${why}}`];
  return m ? [m.values.passes, m.values.passes + m.values.fails] : [0, 0];
}

export function handleSummary(data) {
  return {
    stdout: JSON.stringify({
      ...caseResults(data),
      first: held(data, 'first'),
      burst: held(data, 'burst'),
      stalls: count(data, 'probe_stalls'),
    }),
  };
}
