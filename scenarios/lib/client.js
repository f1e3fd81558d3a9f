// The HTTP client a protocol is measured with: k6/http for h1, h1c and h2, k6/x/http3 for h3.
// k6/x/http3 has k6/http's API (request, get, post, batch, the same params and response) and
// emits the same metrics, so a script is written once and reads the same whatever the protocol.
import http from 'k6/http';
import http3 from 'k6/x/http3';

export function client(cfg) {
  return cfg.proto.quic ? http3 : http;
}
