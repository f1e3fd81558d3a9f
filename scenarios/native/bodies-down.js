// bodies-down on the native loop for h1c, h1 and h2 (k6/x/proxybench/load, only in bin/k6): the
// same run as scenarios/bodies-down.js, each VU's requests sent and checked in Go, the body
// compared as it is read with one run of the pattern (expectRepeat); h3 runs on
// k6/x/proxybench/http3 as scenarios/bodies-down.js does. make bench MODES=bodies runs this one
// unless CLIENT=k6.
'use k6 with k6/x/proxybench/load';
import { bodiesScenario } from '../lib/bodysizes.js';
import { nativeLoop } from '../lib/native.js';

const s = bodiesScenario({ scenario: 'bodies-down', nativeLoop });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
