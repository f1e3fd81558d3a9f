// Every response is verified: status, the exact body (byte for byte, against lib/bodies.js),
// negotiated protocol. A response that fails any of them fails a check, and a failed check makes
// the run invalid (thresholds in options.js, verdict in summary.js).
import { check } from 'k6';
import { PATTERN, ROOT_BODY, ROOT_BYTES, pattern } from './bodies.js';
import { client } from './client.js';
import { badResponses, bodyDiffersAt, newConnections, reusedConnRequests, wrongProto } from './metrics.js';

// The upstream's / body: 4096 bytes (lib/bodies.js), here too for the scripts that import it here.
export { ROOT_BYTES };

// requestParams tags a request with its route, and names it by its URL without the query
// string, so that no per-request value ever becomes a tag (k6 copies name into url).
// The body comes as text: the load scenarios compare every GET / body with ROOT_BODY, and as
// text that is one native string comparison, which costs the client nothing measurable over
// reading an ArrayBuffer's length (k6 alone on a core, 32 VUs: ~240 µs of CPU per request
// either way), where the same comparison of a binary body costs a quarter more (k6/encoding's
// b64encode, compared with the body's base64) or 8 times as much (a loop over its bytes).
// The probes ask for 'binary'.
export function requestParams(cfg, extra = {}) {
  const { tags, ...rest } = extra;
  return {
    responseType: 'text',
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
    // an ASCII string is as many bytes as units: a native regexp says so, where counting unit
    // by unit in JavaScript takes a millisecond for 4 KiB
    return WIDE.test(body) ? utf8Length(body) : body.length;
  }
  return body.byteLength;
}

// WIDE matches the units of a text body that were more than one byte: all but ASCII and the
// U+FFFD of an invalid byte (utf8Length).
const WIDE = /[\u0080-\ufffc\ufffe\uffff]+/;

// utf8Length is the byte count of a text body. k6 decodes a text body as UTF-8, each byte that
// is not valid UTF-8 becoming one U+FFFD: it counts as the one byte it was (a U+FFFD the wire
// did carry, 3 bytes, is then counted 2 short; the upstream sends none, and only a proxy that
// rewrote the body can have put one there). A native regexp picks the wider units first, so
// that JavaScript counts only those.
function utf8Length(s) {
  const wide = (s.match(WIDE_ALL) || []).join('');
  let n = s.length - wide.length;
  for (let i = 0; i < wide.length; i++) {
    const c = wide.charCodeAt(i);
    if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

const WIDE_ALL = new RegExp(WIDE.source, 'g');

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

// differsAt is the offset of the first byte of body (text or binary) that differs from want's,
// an ASCII string, -1 when one is a prefix of the other (the sizes say the rest). A text body
// that differs first at unit i differs first at byte i: the units before it are want's, ASCII,
// one byte each. Only a body known to differ comes here, which over a proxy that rewrites
// bodies is every one: a text body is bisected with native substring comparisons rather than
// walked unit by unit in JavaScript.
export function differsAt(body, want) {
  if (body === null || body === undefined) return -1;
  if (typeof body === 'string') {
    let same = 0; // body and want agree on [0, same)
    let hi = Math.min(body.length, want.length);
    while (same < hi) {
      const mid = (same + hi + 1) >> 1;
      if (body.slice(same, mid) === want.slice(same, mid)) same = mid;
      else hi = mid - 1;
    }
    return same < Math.min(body.length, want.length) ? same : -1;
  }
  const got = new Uint8Array(body);
  const n = Math.min(got.length, want.length);
  for (let i = 0; i < n; i++) {
    if (got[i] !== want.charCodeAt(i)) return i;
  }
  return -1;
}

// sameBody tells whether body (text or binary) is want's bytes. When it is not, it says why in
// bad_responses{why}: size for a body of another size, body for one of want's size whose bytes
// differ, with the offset of the first that does in body_differs_at.
export function sameBody(body, want) {
  if (body === want) return true; // a text body as expected: one string comparison
  if (bodyBytes(body) !== want.length) {
    badResponses.add(1, { why: 'size' });
    return false;
  }
  const at = differsAt(body, want);
  if (at < 0) return true; // a binary body as expected
  badResponses.add(1, { why: 'body' });
  bodyDiffersAt.add(at);
  return false;
}

// PATTERN_RUN is what samePattern compares a body with, a slice at a time: the pattern repeated
// a whole number of times, so that every slice of the body at a multiple of its length starts
// where the pattern starts. 62 KiB: a body of 8 MiB is 133 native string comparisons, and no
// VU holds the body it expects.
const PATTERN_RUN = pattern(PATTERN.length * 1024);

// samePattern tells whether body (text, as the load scripts ask for it) is pattern(n), the
// upstream's /bytes?size=n, without building pattern(n): it compares slices of the body with
// PATTERN_RUN. When it is not, it says why as sameBody does: size, or body with the offset of
// the first differing byte in body_differs_at.
export function samePattern(body, n) {
  if (bodyBytes(body) !== n) {
    badResponses.add(1, { why: 'size' });
    return false;
  }
  for (let off = 0; off < n; off += PATTERN_RUN.length) {
    const got = body.slice(off, off + PATTERN_RUN.length);
    const want = got.length === PATTERN_RUN.length ? PATTERN_RUN : PATTERN_RUN.slice(0, got.length);
    if (got !== want) {
      badResponses.add(1, { why: 'body' });
      bodyDiffersAt.add(off + Math.max(differsAt(got, want), 0));
      return false;
    }
  }
  return true;
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
// the 4096-byte body byte for byte, expected protocol): every check key is a sample k6 must
// process, and at tens of thousands of requests per second on a shared 2-core machine three
// keys cost the client ~7% of its throughput. Which condition failed is kept by
// bad_responses{why} (failures only: status, size, body, proto), and where a body of the right
// size first differed by body_differs_at. The check's name keeps saying "4096 bytes": the
// results and their readers know it by that name.
export function rootCheckName(cfg, bytes = ROOT_BYTES) {
  return `200, ${bytes} bytes, ${cfg.proto.expected}`;
}

export function checkRoot(res, cfg) {
  countConnection(res, cfg);
  const rightProto = protoOK(res, cfg);
  const okStatus = res.status === 200;
  const okBody = sameBody(res.body, ROOT_BODY);
  if (!okStatus) badResponses.add(1, { why: 'status' });
  if (!rightProto) badResponses.add(1, { why: 'proto' });
  return check(res, { [rootCheckName(cfg)]: () => okStatus && okBody && rightProto });
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
//   expectBody: the body the answer must be, byte for byte (its size then defaults expectBytes),
//     for a probe whose samples cannot see their bytes (stream.js). The others hold setup's
//     answer to its size only and count a body that differs in the measured samples, where the
//     result says in how many and at which byte (bad_responses{why:body}, body_differs_at).
//   verify(res) may return a reason the answer is wrong (e.g. /upload's byte count).
//   anyProto: skip the protocol check (ws.js probes plain HTTP; its upgrade is HTTP/1.1 anyway).
export function probeTarget(
  cfg,
  {
    method = 'GET',
    path = cfg.route,
    body = null,
    params = {},
    expectBody,
    expectBytes = expectBody === undefined ? undefined : expectBody.length,
    verify,
    anyProto = false,
  } = {},
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
  const at = expectBody === undefined ? -1 : differsAt(res.body, expectBody);
  if (at >= 0) {
    const got = bodyText(res.body).slice(at, at + 16);
    throw new Error(
      `${method} ${url} on target "${t.name}" sent a body that differs from the upstream's at byte ${at} of ` +
        `${bytes}: ${JSON.stringify(got)}…, want ${JSON.stringify(expectBody.slice(at, at + 16))}… ` +
        '(the proxy rewrote it: every proxy here must pass bodies through untouched)',
    );
  }
  const wrong = verify && verify(res);
  if (wrong) {
    throw new Error(`${method} ${url} on target "${t.name}": ${wrong}`);
  }
  return { status: res.status, proto: res.proto, bytes };
}
