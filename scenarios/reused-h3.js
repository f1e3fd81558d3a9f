// reused-h3: steady-state throughput of HTTP/3 (QUIC) on kept-alive connections, through
// k6/x/proxybench/http3 (our HTTP/3 client: k6/http has none) to the target's TLS port number
// over UDP. Each VU is one QUIC connection carrying STREAMS concurrent streams, one http3.batch
// per iteration, as in reused-h2 (lib/scenario.js batchScenario). Every response is checked:
// 200, 4096 bytes, HTTP/3.0. The upstream's /debug/conns h3 counter shows one QUIC connection
// per VU (plus setup's).
'use k6 with k6/x/proxybench/http3';
import { extension } from './lib/extension.js';
import { batchScenario } from './lib/scenario.js';

const s = batchScenario({ scenario: 'reused-h3', client: extension('k6/x/proxybench/http3') });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
