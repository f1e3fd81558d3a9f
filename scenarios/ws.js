// ws: WebSocket through the target — the upgrade handshake and one message's round trip,
// SAMPLES times, each on a new connection (a WebSocket is its own connection), over PROTO h1
// (wss://, the default) or h1c (ws://). A WebSocket upgrade is HTTP/1.1 whatever the client
// negotiates for plain requests (k6/x/proxybench/ws offers only http/1.1 by ALPN, as
// k6/websockets does; h2 would need extended CONNECT), so no GODEBUG is needed here.
// Each sample: ws.echo() dials, upgrades (ws_connect: the dial to the 101), reads the upstream's
// welcome {"hello":"bench"}, sends a message, reads its echo (ws_echo), closes. Checked:
// upgraded, welcome, echo. The whole sample ends within SAMPLE_TIMEOUT (lib/options.js) whatever
// the target does, and a failed one says where it stopped (probe_failures{why}: no_upgrade,
// no_welcome, no_echo, …). k6/x/proxybench/ws, not k6/websockets: k6's clients give the upgrade
// a fixed 60 s, k6/websockets' close() of a socket still connecting blocks the VU for good, and
// its upgraded socket whose server never answers the close never ends (extensions/README.md).
'use k6 with k6/x/proxybench/ws';
import { check } from 'k6';
import { probeTarget } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { extension } from './lib/extension.js';
import { clockMs, now, wsConnect, wsEcho } from './lib/metrics.js';
import { SAMPLE_TIMEOUT, probeOptions, sel } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { countFailure } from './lib/probes.js';
import { summarize } from './lib/summary.js';

const ws = extension('k6/x/proxybench/ws');

const WELCOME = '{"hello":"bench"}';
const MESSAGE = 'proxybench echo 0123456789abcdef';

const cfg = loadConfig({ scenario: 'ws', websocket: true, client: 'k6/x/proxybench/ws' });
const out = planOutput(cfg);
const url = cfg.url;
const params = { tags: { route: cfg.route, name: url }, timeout: SAMPLE_TIMEOUT };

export const options = probeOptions(cfg, {
  trends: ['ws_connect', 'ws_echo'],
  counters: [`ws_sessions${sel(cfg)}`, `ws_sessions${sel(cfg, ',status:101')}`],
});

export function setup() {
  assertOutput(out);
  // the target is up and routes: plain HTTP on the same port (any protocol)
  return { probed: probeTarget(cfg, { path: '/healthz', anyProto: true }) };
}

export default function () {
  clockMs.add(now());
  const res = ws.echo(url, MESSAGE, params);
  clockMs.add(now());
  if (res.status === 101) wsConnect.add(res.connect_ms);
  if (res.echo !== null) wsEcho.add(res.echo_ms);
  countFailure(res.failure);
  check(res, {
    'upgraded (101)': (r) => r.status === 101,
    [`welcome is ${WELCOME}`]: (r) => r.welcome === WELCOME,
    'echo matches': (r) => r.echo === MESSAGE,
  });
  if (res.error) console.warn(`ws ${url}: ${res.error}`);
}

export function handleSummary(data) {
  return summarize(data, cfg, out, {
    ws: true,
    expected: cfg.samples,
    latency: 'ws_echo',
    ttfb: 'ws_connect',
    extra: { ws_connect: 'ws_connect', ws_echo: 'ws_echo' },
  });
}
