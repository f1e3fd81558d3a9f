// idle: what holding IDLE_CONNECTIONS (default 10 000) idle keep-alive connections costs the
// target, over PROTO (h1c, h1 or h2; default h2), on the native loop only (k6/x/proxybench/load:
// one k6 VU per connection could not hold so many). The warm-up opens them, each with one GET /
// checked as every answer is; for DURATION they stay idle but for a trickle of 40 requests a
// second over 4 of them (the measured figures: its latency); then each VU counts those the
// target still holds and closes them. Fewer held than planned (refused, closed, never answered)
// makes the run invalid, with how each was lost. The runner adds what the hold cost the target:
// RSS per connection and CPU (idle_cost). make bench MODES=idle runs it for every target.
'use k6 with k6/x/proxybench/load';
import { idleScenario } from './lib/idle.js';

const s = idleScenario({ scenario: 'idle' });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
