// Unit tests of native.js's split of a fresh run's REQUESTS over its VUs and their iterations,
// run by scenarios/native_test.go with bin/k6 (it sends no request). Each case is a check of
// its own: "case: <name>: …"; handleSummary prints the cases and those that failed.
import { check } from 'k6';
import { CASE, caseResults } from './cases.js';
import { FRESH_CHUNK, FRESH_PARTS, freshIterations, freshShare } from './native.js';

export const options = { iterations: 1 };

// requests shared by vus VUs, as nativeFreshScenario plans them
const PLANS = [
  { requests: 2000, vus: 32 },
  { requests: 120, vus: 4 },
  { requests: 7, vus: 7 },
  { requests: 10, vus: 3 },
  { requests: 20000, vus: 64 },
  { requests: 50001, vus: 100 },
];

export default function () {
  for (const { requests, vus } of PLANS) {
    const iterations = freshIterations(requests, vus);
    let sum = 0;
    let most = 0;
    let least = Infinity;
    for (let i = 0; i < vus; i++) {
      for (let k = 0; k < iterations; k++) {
        const n = freshShare(requests, vus, iterations, i, k);
        sum += n;
        most = Math.max(most, n);
        least = Math.min(least, n);
      }
    }
    const name = `${requests} over ${vus} VUs × ${iterations}`;
    check(sum, { [`${CASE}${name}: every request sent once`]: (s) => s === requests });
    check(most, { [`${CASE}${name}: no iteration over FRESH_CHUNK`]: (m) => m <= FRESH_CHUNK });
    check(most - least, { [`${CASE}${name}: parts differ by at most one`]: (d) => d <= 1 });
    check(iterations, { [`${CASE}${name}: at least FRESH_PARTS iterations`]: (n) => n >= FRESH_PARTS });
  }
}

export function handleSummary(data) {
  return { stdout: JSON.stringify(caseResults(data)) };
}
