// ws: WebSocket through the target — the upgrade handshake and one message's round trip,
// SAMPLES times, each on a new connection (a WebSocket is its own connection), over PROTO h1
// (wss://, the default) or h1c (ws://). A WebSocket upgrade is HTTP/1.1 whatever the client
// negotiates for plain requests (k6/websockets offers only http/1.1 by ALPN; h2 would need
// extended CONNECT, which k6 does not speak), so no GODEBUG is needed here.
// Each sample: new WebSocket → open (ws_connect), the upstream's welcome {"hello":"bench"},
// send a message, its echo (ws_echo), close. Checked: upgraded, welcome, echo.
import { check } from 'k6';
import { clearTimeout, setTimeout } from 'k6/timers';
import { WebSocket } from 'k6/websockets';
import { probeTarget } from './lib/checks.js';
import { loadConfig } from './lib/config.js';
import { clockMs, now, wsConnect, wsEcho } from './lib/metrics.js';
import { probeOptions, sel } from './lib/options.js';
import { assertOutput, planOutput } from './lib/output.js';
import { summarize } from './lib/summary.js';

const WELCOME = '{"hello":"bench"}';
const MESSAGE = 'proxybench echo 0123456789abcdef';
const TIMEOUT_MS = 10000;

const cfg = loadConfig({ scenario: 'ws', websocket: true, client: 'k6/websockets' });
const out = planOutput(cfg);
const url = cfg.url;
const params = { tags: { route: cfg.route, name: url } };

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
  const start = now();
  clockMs.add(start);
  let opened = false;
  let welcome = null;
  let echo = null;
  let sentAt = 0;
  let error = '';

  const ws = new WebSocket(url, null, params);
  const timer = setTimeout(() => {
    error = error || `no echo within ${TIMEOUT_MS} ms`;
    ws.close();
  }, TIMEOUT_MS);

  ws.onopen = () => {
    opened = true;
    wsConnect.add(now() - start);
  };
  ws.onmessage = (e) => {
    if (welcome === null) {
      welcome = e.data;
      sentAt = now();
      ws.send(MESSAGE);
      return;
    }
    wsEcho.add(now() - sentAt);
    echo = e.data;
    ws.close();
  };
  ws.onerror = (e) => {
    error = String((e && e.error) || 'error');
  };
  ws.onclose = () => {
    clearTimeout(timer);
    clockMs.add(now());
    check(null, {
      'upgraded (101)': () => opened,
      [`welcome is ${WELCOME}`]: () => welcome === WELCOME,
      'echo matches': () => echo === MESSAGE,
    });
    if (error) console.warn(`ws ${url}: ${error}`);
  };
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
