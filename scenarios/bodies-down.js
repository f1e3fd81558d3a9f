// bodies-down: the body-size sweep's downloads, GET /bytes?size=BODY_BYTES (default 1 MiB, at
// most 8 MiB) over PROTO (h1, h1c, h2 or h3; default h2) through k6/http (h3:
// k6/x/proxybench/http3): CONNECTIONS connections, one request in flight on each, for DURATION
// after a warm-up. Every body is compared byte for byte with the upstream's pattern, a slice at
// a time (lib/bodysizes.js); the result says its MB/s. make bench MODES=bodies runs it at every
// size of BODY_SIZES, on the native loop (native/bodies-down.js) unless CLIENT=k6.
import { bodiesScenario } from './lib/bodysizes.js';

const s = bodiesScenario({ scenario: 'bodies-down' });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
