// HTTP/3 GETs with k6/x/proxybench/http3: one QUIC connection per VU, reused across
// iterations, and a batch as two concurrent streams on it.
//
//   BASE_URL    target (default https://bench.test:19950, the example server)
//   CONNECT_TO  the IP bench.test is mapped to with the hosts option (default 127.0.0.1)
//
// The certificate is verified: trust its CA with SSL_CERT_FILE (see examples/server).
import http3 from "k6/x/proxybench/http3";
import { check } from "k6";

const BASE_URL = __ENV.BASE_URL || "https://bench.test:19950";
const CONNECT_TO = __ENV.CONNECT_TO || "127.0.0.1";

export const options = {
  hosts: { "bench.test": CONNECT_TO },
  vus: 2,
  duration: "5s",
  batchPerHost: 0, // let a batch put all its requests in flight at once
  thresholds: {
    http_req_failed: ["rate==0"],
    "http_reqs{proto:HTTP/3.0}": ["count>0"],
    "http_req_duration{proto:HTTP/3.0}": ["p(95)<500"],
    checks: ["rate==1"],
  },
};

export function setup() {
  const res = http3.get(`${BASE_URL}/healthz`, { timeout: "5s", tags: { name: "setup" } });
  if (res.status !== 200) {
    throw new Error(`${BASE_URL} doesn't answer over HTTP/3 (${res.error || res.status}): ` +
      "is the server up, and its CA in SSL_CERT_FILE?");
  }
}

export default function () {
  const res = http3.get(`${BASE_URL}/`, { tags: { name: "/" } });
  check(res, {
    "status is 200": (r) => r.status === 200,
    "protocol is HTTP/3.0": (r) => r.proto === "HTTP/3.0",
    "body is 4096 bytes": (r) => r.body.length === 4096,
  });

  const [json, health] = http3.batch([
    ["GET", `${BASE_URL}/json`, null, { tags: { name: "/json" } }],
    ["GET", `${BASE_URL}/healthz`, null, { tags: { name: "/healthz" } }],
  ]);
  check(json, { "json over HTTP/3": (r) => r.proto === "HTTP/3.0" && r.json("name") === "proxybench" });
  check(health, { "healthz is ok": (r) => r.body === "ok" });
}
