// The project's own metrics. k6 registers a metric once per test, whichever VU creates it.
import exec from 'k6/execution';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';

// Requests that opened a connection of their own (timings.connecting > 0, and for TLS also
// timings.tls_handshaking > 0). fresh-* must open one per request; reused-* should open
// about none once warmed up.
export const newConnections = new Counter('new_connections');

// Requests sent over a connection that was already open: must stay 0 in fresh-*.
export const reusedConnRequests = new Counter('reused_conn_requests');

// Responses over another protocol than the scenario measures.
export const wrongProto = new Counter('wrong_proto');

// Responses that failed the load scenarios' one combined check, tagged with why: status,
// size, body (the right size, other bytes) or proto (only failures add a sample, so it costs
// nothing while all is well). The probes count a body that is not the upstream's here too.
export const badResponses = new Counter('bad_responses');

// Where each body of the right size that was not the upstream's first differed from it: the
// 0-based offset of its first differing byte (a count of bytes, not a time). One sample per
// bad_responses{why:body}; the native loop (k6/x/proxybench/load) adds to the same metric.
export const bodyDiffersAt = new Trend('body_differs_at');

// Downloads whose answer began and whose body ended before its size: a 200 with fewer bytes, or
// an answer whose connection or stream broke after some of its body (a proxy that gave up on a
// large body mid-way). Only cuts add a sample; the native loop adds to the same metric.
export const bodyCut = new Counter('body_cut');

// Probe responses the proxy compressed (lib/probes.js), tagged why:compressed and with the
// coding: the upstream never compresses, so the proxy did. Only breaches add a sample, so it
// costs nothing while all is well.
export const probeViolations = new Counter('probe_violations');

// Probe samples that failed, tagged with why (lib/probes.js FAILURES): how each ended, which
// the verdict says. Only failures add a sample, so it costs nothing while all is well.
export const probeFailures = new Counter('probe_failures');

// Whether each paced probe response was held back (lib/probes.js), tagged with why: first (the
// first event or chunk came after the upstream sent the next) or burst (two came closer together
// than the upstream ever sends them). A rate: a cell is held back when more than half its
// responses were (the verdict, in Go; the scripts' thresholds say the same for a stock k6).
export const probeHeldBack = new Rate('probe_held_back');

// The figure behind each response held back, tagged with the same why: how long the first
// event or chunk took, or the shortest gap (ms).
export const probeViolationMs = new Trend('probe_violation_ms', true);

// Probe responses with a stall: one gap between parts longer than the interval and its slack
// (lib/probes.js). A figure, not a verdict: a busy machine makes stalls as a proxy can.
export const probeStalls = new Counter('probe_stalls');

// The gaps between the stream probe's whole chunks (the sse extension times its events' gaps
// itself, as sse_event_gap).
export const streamChunkGap = new Trend('stream_chunk_gap', true);

// Readings of the test clock (ms since the test started) at the start and the end of every
// measured iteration where the window matters: min is when measuring began, max when it ended.
export const clockMs = new Gauge('clock_ms', true);

// A fresh request's new connection to its first byte: TCP connect, TLS handshake (QUIC's for h3)
// and time to first byte, what a new client waits for; the native loop times it from its dial.
export const connTTFB = new Trend('conn_ttfb', true);

// WebSocket: the dial to the upgrade's 101 (TCP, TLS, upgrade), and one message's round trip.
export const wsConnect = new Trend('ws_connect', true);
export const wsEcho = new Trend('ws_echo', true);

// now is a sub-millisecond clock: k6 has no performance.now(), and Date.now() counts whole
// milliseconds, too coarse for loopback latencies.
export function now() {
  return exec.instance.currentTestRunDuration;
}
