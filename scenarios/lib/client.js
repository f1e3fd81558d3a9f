// The HTTP client a protocol is measured with: k6/http for h1, h1c and h2, k6/x/proxybench/http3
// for h3. k6/x/proxybench/http3 has k6/http's API (request, get, post, batch, the same params and
// response) and emits the same metrics, so a script is written once and reads the same whatever
// the protocol. It is loaded only for h3, so json and upload over h1, h1c and h2 run on any k6.
import http from 'k6/http';
import { extension } from './extension.js';

// clientFor runs in the init context (loadConfig), where an extension can be loaded.
export function clientFor(proto) {
  return proto.quic ? extension('k6/x/proxybench/http3') : http;
}

// client is the configuration's client, for code that runs after init.
export function client(cfg) {
  return cfg.http;
}
