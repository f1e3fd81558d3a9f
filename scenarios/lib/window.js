// The measured window of the reused scenarios. k6 stops starting iterations after DURATION but
// lets running ones finish (gracefulStop, 30 s by default): what a slow target answers in that
// grace period would otherwise be divided by DURATION as if it had been answered inside it. So
// an iteration that ends after the window counts its requests in late_requests, and req/s
// counts only the requests that completed within DURATION (summary.js).
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';

// Requests of the measured scenario whose iteration ended after DURATION.
export const lateRequests = new Counter('late_requests');

// lateCounter returns the function a reused iteration calls once its n requests have ended.
// The window's end is read from k6 once per VU (exec.scenario is a getter per property, too
// dear for every iteration): the first iteration a VU runs in the measured scenario sets it,
// and until then (the warm-up) every iteration looks again.
export function lateCounter(cfg) {
  let end = 0;
  return function ended(n) {
    const t = Date.now();
    if (t <= end) return;
    const sc = exec.scenario;
    if (sc.name !== cfg.k6Scenario) return;
    if (end === 0) {
      end = sc.startTime + cfg.durationS * 1000;
      if (t <= end) return;
    }
    lateRequests.add(n);
  };
}

// closedIteration is a reused-style VU's iteration on the native loop (k6/x/proxybench/load's
// client: lib/native.js): one call runs to the end of the k6 scenario the VU is in (warm-up or
// measured); the loop then stops sending and counts what ends after it in late_requests itself.
export function closedIteration(cfg, loop) {
  return () => {
    const sc = exec.scenario;
    const lengthS = sc.name === cfg.k6Scenario ? cfg.durationS : cfg.warmupS;
    loop.run(sc.startTime + lengthS * 1000);
  };
}
