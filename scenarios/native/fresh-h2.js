// fresh-h2 on the native loop: every request on a brand-new connection, driven by
// k6/x/proxybench/load (only in bin/k6). The same run as scenarios/fresh-h2.js at a fraction
// of the client's CPU per request; make k6 and make bench run this one unless CLIENT=k6.
// Every response is checked in Go.
'use k6 with k6/x/proxybench/load';
import { nativeFreshScenario } from '../lib/native.js';

const s = nativeFreshScenario({ scenario: 'fresh-h2' });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
