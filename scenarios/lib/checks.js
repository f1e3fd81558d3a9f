// Every response is verified: status, exact body size, negotiated protocol. A response that
// fails any of them fails a check, and a failed check makes the run invalid (thresholds in
// options.js, verdict in summary.js).
import { check } from 'k6';
import { client } from './client.js';
import { badResponses, newConnections, reusedConnRequests, wrongProto } from './metrics.js';

// The upstream's / body: 4096 bytes (upstream/doc.go, the routes).
export const ROOT_BYTES = 4096;

// requestParams tags a request with its route, and names it by its URL without the query
// string, so that no per-request value ever becomes a tag (k6 copies name into url).
export function requestParams(cfg, extra = {}) {
  const { tags, ...rest } = extra;
  return {
    responseType: 'binary',
    ...rest,
    tags: { route: cfg.route, name: cfg.url.split('?')[0], ...tags },
  };
}

// bodyBytes is the exact byte count of a body read as 'binary' (an ArrayBuffer) or as text.
export function bodyBytes(body) {
  if (body === null || body === undefined) {
    return 0;
  }
  if (typeof body === 'string') {
    return utf8Length(body);
  }
  return body.byteLength;
}

function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

// bodyText decodes an ASCII/UTF-8 'binary' body (small bodies only: /json, /upload replies).
export function bodyText(body) {
  if (body === null || body === undefined) {
    return '';
  }
  if (typeof body === 'string') {
    return body;
  }
  return String.fromCharCode.apply(null, new Uint8Array(body));
}

// opened tells whether a request opened the connection it went over: k6 timed a connect (and a
// TLS handshake, over TLS) for it. Over QUIC the handshake is the connection: k6/x/proxybench/http3 times
// the QUIC handshake as tls_handshaking (and the UDP socket's opening, a few µs, as connecting),
// on the request that dialled only, so tls_handshaking > 0 is the proof.
export function opened(res, cfg) {
  const t = res.timings;
  if (cfg.proto.quic) {
    return t.tls_handshaking > 0;
  }
  return t.connecting > 0 && (!cfg.proto.tls || t.tls_handshaking > 0);
}

// countConnection records whether a response came over a connection it opened itself.
export function countConnection(res, cfg) {
  if (!res.status) {
    return; // failed before a response: http_req_failed already counts it
  }
  if (opened(res, cfg)) {
    newConnections.add(1);
  } else if (cfg.mode === 'fresh') {
    reusedConnRequests.add(1);
  }
}

// protoOK counts a response over another protocol than expected.
export function protoOK(res, cfg) {
  if (res.status && res.proto !== cfg.proto.expected) {
    wrongProto.add(1);
    return false;
  }
  return !!res.status;
}

// checkRoot verifies one GET / response of the load scenarios. It is ONE check (status 200,
// 4096 bytes, expected protocol): every check key is a sample k6 must process, and at tens of
// thousands of requests per second on a shared 2-core machine three keys cost the client
// ~7% of its throughput. Which condition failed is kept by bad_responses{why} (failures only).
export function rootCheckName(cfg) {
  return `200, ${ROOT_BYTES} bytes, ${cfg.proto.expected}`;
}

export function checkRoot(res, cfg) {
  countConnection(res, cfg);
  const rightProto = protoOK(res, cfg);
  const okStatus = res.status === 200;
  const okSize = bodyBytes(res.body) === ROOT_BYTES;
  if (!okStatus) badResponses.add(1, { why: 'status' });
  if (!okSize) badResponses.add(1, { why: 'size' });
  if (!rightProto) badResponses.add(1, { why: 'proto' });
  return check(res, { [rootCheckName(cfg)]: () => okStatus && okSize && rightProto });
}

// howToRun says how to run a script so that k6 speaks the protocol it measures.
export function howToRun(cfg) {
  const isProbe = cfg.mode === 'probe';
  const env = cfg.proto.godebug ? `GODEBUG=${cfg.proto.godebug} ` : '';
  const proto = isProbe ? `PROTO=${cfg.proto.name} ` : '';
  const make = `make k6 SCENARIO=${cfg.scenario}${isProbe ? ` PROTO=${cfg.proto.name}` : ''}`;
  return `${env}${proto}bin/k6 run scenarios/${cfg.scenario}.js (or ${make})`;
}

// explainProto is the error for a response over the wrong protocol.
export function explainProto(cfg, got) {
  const want = cfg.proto.expected;
  let why;
  if (cfg.proto.godebug && got === 'HTTP/2.0') {
    why =
      "k6 (Go's HTTP client) offers h2 by ALPN on every TLS connection; " +
      `HTTP/1.1 over TLS needs ${cfg.proto.godebug} in GODEBUG`;
  } else if (want === 'HTTP/2.0' && /http2client=0/.test(__ENV.GODEBUG || '')) {
    why = 'GODEBUG=http2client=0 is set, which keeps k6 from negotiating h2: unset it';
  } else if (want === 'HTTP/2.0') {
    why = `the target did not accept h2 by ALPN on ${cfg.origin}`;
  } else if (want === 'HTTP/3.0') {
    why = 'k6/x/proxybench/http3 speaks HTTP/3 only: this is a bug in the client, not a property of the target';
  } else {
    why = 'the target answered over an unexpected protocol';
  }
  return (
    `${cfg.scenario} measures ${want} (${cfg.proto.name}) but the response came over ` +
    `${got || 'nothing'}: ${why}; run it as ${howToRun(cfg)}`
  );
}

// probeTarget sends one request before any load and throws a clear error when the target is
// unreachable, untrusted, speaks the wrong protocol or answers wrongly. It records nothing in
// the measured scenario (setup's samples carry no scenario tag).
//   verify(res) may return a reason the answer is wrong (e.g. /upload's byte count).
//   anyProto: skip the protocol check (ws.js probes plain HTTP; its upgrade is HTTP/1.1 anyway).
export function probeTarget(
  cfg,
  { method = 'GET', path = cfg.route, body = null, params = {}, expectBytes, verify, anyProto = false } = {},
) {
  const url = cfg.origin + path;
  const res = client(cfg).request(method, url, body, {
    responseType: 'binary',
    timeout: '10s',
    ...params,
    tags: { route: cfg.route, name: url.split('?')[0], probe: 'setup' },
  });
  const t = cfg.target;
  if (!res.status) {
    let hint = 'is the stack up? (make up; make status shows it)';
    if (/x509|certificate|tls:/i.test(res.error || '')) {
      hint =
        'the certificate was not verified: point SSL_CERT_FILE at the proxybench CA ' +
        '(make k6 does); certificates are verified, never skipped';
    } else if (cfg.proto.quic) {
      // QUIC gets no refusal from a closed UDP port: the handshake just times out (1211)
      hint =
        `nothing answered QUIC on UDP port ${t.tlsPort}: is the stack up, and does "${t.name}" serve ` +
        'h3? (make status says "no h3" for a target that does not; make k6 shows such a cell as "no h3")';
    }
    throw new Error(`cannot reach target "${t.name}" at ${url} (connecting to ${t.address}): ${res.error}; ${hint}`);
  }
  if (!anyProto && res.proto !== cfg.proto.expected) {
    throw new Error(explainProto(cfg, res.proto));
  }
  if (res.status !== 200) {
    const text = bodyText(res.body).slice(0, 200);
    throw new Error(`${method} ${url} on target "${t.name}" answered ${res.status}, want 200: ${text}`);
  }
  const bytes = bodyBytes(res.body);
  if (expectBytes !== undefined && bytes !== expectBytes) {
    throw new Error(`${method} ${url} on target "${t.name}" sent a ${bytes}-byte body, want ${expectBytes}`);
  }
  const wrong = verify && verify(res);
  if (wrong) {
    throw new Error(`${method} ${url} on target "${t.name}": ${wrong}`);
  }
  return { status: res.status, proto: res.proto, bytes };
}
