// bodies-up: the body-size sweep's uploads, POST /upload of BODY_BYTES (default 1 MiB, at most
// 8 MiB, the upstream's upload limit) over PROTO (h1, h1c, h2 or h3; default h2) through
// k6/http (h3: k6/x/proxybench/http3): CONNECTIONS connections, one upload in flight on each,
// for DURATION after a warm-up. The upstream's answer {"bytes":N} must say it received every
// byte (lib/bodysizes.js); the result says the MB/s. make bench MODES=bodies runs it at every
// size of BODY_SIZES, on the native loop (native/bodies-up.js) unless CLIENT=k6.
import { bodiesScenario } from './lib/bodysizes.js';

const s = bodiesScenario({ scenario: 'bodies-up' });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
