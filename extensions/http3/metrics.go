package http3

import (
	"sync/atomic"

	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
)

// The module registers no metric of its own: an HTTP/3 request emits k6's
// built-in HTTP metrics (state.BuiltinMetrics), built by k6 itself:
//
//   - http_reqs, http_req_duration, http_req_blocked, http_req_connecting,
//     http_req_tls_handshaking, http_req_sending, http_req_waiting,
//     http_req_receiving and http_req_failed come from httpext.MakeRequest:
//     its httpext.Tracer times the request from the httptrace hooks (fired by
//     quic-go's http3.Transport and by pool.dial), Trail.SaveSamples builds
//     the samples, with k6's tags (proto=HTTP/3.0, status, method, url, name,
//     expected_response, error_code, tls_version, scenario, the VU's tags and
//     params.tags, filtered by the systemTags option);
//   - data_sent and data_received are the bytes of the VU's QUIC connections
//     (UDP payloads: QUIC packets, handshake, ACKs and retransmissions
//     included, as k6 counts TCP payloads for k6/http), added to the counters
//     of k6's dialer, which k6 turns into samples at the end of each
//     iteration, with the iteration's tags, exactly as for k6/http.

// addData adds QUIC bytes to the VU dialer's counters. Safe from any
// goroutine: it touches no sample channel, so it can't panic when the test
// has ended. Without k6's dialer (never the case in `k6 run`) the bytes are
// not counted.
func addData(state *lib.State, sent, received uint64) {
	d, ok := state.Dialer.(*netext.Dialer)
	if !ok || d == nil {
		return
	}
	if sent > 0 {
		atomic.AddInt64(&d.BytesWritten, int64(sent)) //nolint:gosec // a connection's byte count fits in int64
	}
	if received > 0 {
		atomic.AddInt64(&d.BytesRead, int64(received)) //nolint:gosec // idem
	}
}

// expectedStatus is k6/http's default response callback (200 to 399): it
// sets the expected_response tag and the http_req_failed value.
func expectedStatus(status int) bool {
	return status >= 200 && status < 400
}
