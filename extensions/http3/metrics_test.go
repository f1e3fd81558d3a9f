package http3

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// httpMetrics are the samples k6 emits for every HTTP request.
var httpMetrics = []string{
	"http_reqs", "http_req_duration", "http_req_blocked", "http_req_connecting",
	"http_req_tls_handshaking", "http_req_sending", "http_req_waiting", "http_req_receiving",
	"http_req_failed",
}

func TestMetrics(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		opts     stateOption
		js       string
		wantTags map[string]string
		noTags   []string
		failed   float64
	}{
		{
			name: "k6/http's tags, plus params.tags",
			js:   `http3.get("BASE/json", {tags: {route: "/json", target: "direct"}})`,
			wantTags: map[string]string{
				"proto": "HTTP/3.0", "status": "200", "method": "GET", "url": "BASE/json", "name": "BASE/json",
				"expected_response": "true", "scenario": "default", "group": "", "tls_version": "tls1.3",
				"route": "/json", "target": "direct",
			},
			noTags: []string{"error_code", "error"},
		},
		{
			name:     "a name tag sets the url tag too",
			js:       `http3.get("BASE/json?x=1", {tags: {name: "json"}})`,
			wantTags: map[string]string{"name": "json", "url": "json"},
		},
		{
			name: "an error status",
			js:   `http3.post("BASE/status/503", "x")`,
			wantTags: map[string]string{
				"status": "503", "method": "POST", "expected_response": "false", "error_code": "1503",
				"proto": "HTTP/3.0",
			},
			failed: 1,
		},
		{
			name: "a request that failed",
			js:   `http3.get("BASE/slow?d=2s", {timeout: "100ms"})`,
			wantTags: map[string]string{
				"status": "0", "error_code": "1050", "error": "request timeout", "expected_response": "false",
			},
			noTags: []string{"proto"},
			failed: 1,
		},
		{
			// quic-go says only that it cancelled the stream: a timeout, as over h1 and h2
			name: "a body that stalled until the timeout",
			js:   `http3.get("BASE/stall", {timeout: "200ms"})`,
			wantTags: map[string]string{
				"status": "0", "error_code": "1050", "error": "request timeout", "expected_response": "false",
			},
			failed: 1,
		},
		{
			name: "systemTags is respected",
			opts: func(s *lib.State) {
				tags := metrics.SystemTagSet(metrics.TagStatus | metrics.TagMethod)
				s.Options.SystemTags = &tags
			},
			js:       `http3.get("BASE/")`,
			wantTags: map[string]string{"status": "200", "method": "GET"},
			noTags:   []string{"proto", "url", "name", "expected_response", "tls_version"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts []stateOption
			if tc.opts != nil {
				opts = append(opts, tc.opts)
			}
			e := newTestEnv(t, opts...)
			_, err := e.run(tc.js)
			require.NoError(t, err)
			samples := e.drain()
			for _, name := range httpMetrics {
				got := byMetric(samples, name)
				require.Len(t, got, 1, name)
				tags := got[0].Tags.Map()
				for k, v := range tc.wantTags {
					if k == "url" || k == "name" {
						v = replaceBase(v, e.base)
					}
					assert.Equal(t, v, tags[k], "%s tag %s", name, k)
				}
				for _, k := range tc.noTags {
					assert.NotContains(t, tags, k, name)
				}
			}
			assert.Equal(t, tc.failed, byMetric(samples, "http_req_failed")[0].Value)
			assert.Equal(t, 1.0, byMetric(samples, "http_reqs")[0].Value)
		})
	}
}

func replaceBase(v, base string) string {
	if len(v) >= 4 && v[:4] == "BASE" {
		return base + v[4:]
	}
	return v
}

// TestMetricsTimings: a new connection has its connect and handshake times,
// a reused one has none; the samples match the response's timings.
func TestMetricsTimings(t *testing.T) {
	t.Parallel()

	e := newTestEnv(t)
	var rs []jsResponse
	e.result(t, `[http3.get("BASE/"), http3.get("BASE/")]`, &rs)
	samples := e.drain()

	value := func(name string, i int) float64 { return byMetric(samples, name)[i].Value }
	assert.Greater(t, value("http_req_connecting", 0), 0.0)
	assert.Greater(t, value("http_req_tls_handshaking", 0), 0.0)
	assert.GreaterOrEqual(t, value("http_req_blocked", 0),
		value("http_req_connecting", 0)+value("http_req_tls_handshaking", 0))
	assert.Zero(t, value("http_req_connecting", 1))
	assert.Zero(t, value("http_req_tls_handshaking", 1))

	for i, r := range rs {
		assert.InDelta(t, r.Timings.Duration, value("http_req_duration", i), 1e-9)
		assert.InDelta(t, r.Timings.TLSHandshaking, value("http_req_tls_handshaking", i), 1e-9)
		assert.InDelta(t, r.Timings.Waiting, value("http_req_waiting", i), 1e-9)
		assert.InDelta(t, r.Timings.Duration, r.Timings.Sending+r.Timings.Waiting+r.Timings.Receiving, 1e-6)
	}
}

// TestConnectingIsTheFirstRoundTrip: over QUIC, http_req_connecting runs to
// the server's first packet (the first round trip, as TCP's connect ends at
// the SYN's answer) and http_req_tls_handshaking from there: a first answer
// held back shows in connecting, not in the handshake.
func TestConnectingIsTheFirstRoundTrip(t *testing.T) {
	t.Parallel()

	const hold = 400 * time.Millisecond
	srv := startServer(t)
	e := newTestEnvFor(t, srv)
	e.base = fmt.Sprintf("https://%s:%d", benchHost, holdFirstAnswer(t, srv.Addr, hold).Port)
	var r jsResponse
	e.result(t, `http3.get("BASE/")`, &r)
	require.Equal(t, 200, r.Status, r.Error)
	held := float64(hold) / float64(time.Millisecond)
	assert.GreaterOrEqual(t, r.Timings.Connecting, held, "connecting includes the wait for the first answer")
	assert.Less(t, r.Timings.TLSHandshaking, held, "the handshake starts at the first answer")
	assert.Positive(t, r.Timings.TLSHandshaking)
}

// holdFirstAnswer relays UDP between one client and to, holding the first
// datagram from to back for hold: a server slow to answer, seen from the
// client. It returns the address to send to.
func holdFirstAnswer(t *testing.T, to *net.UDPAddr, hold time.Duration) *net.UDPAddr {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	back, err := net.DialUDP("udp", nil, to)
	require.NoError(t, err)
	t.Cleanup(func() { _ = front.Close(); _ = back.Close() })
	var client atomic.Pointer[net.UDPAddr]
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := front.ReadFromUDP(buf)
			if err != nil {
				return
			}
			client.Store(from)
			_, _ = back.Write(buf[:n])
		}
	}()
	go func() {
		buf := make([]byte, 65536)
		for first := true; ; first = false {
			n, err := back.Read(buf)
			if err != nil {
				return
			}
			if first {
				time.Sleep(hold) // the network's delay, not a wait for an event
			}
			_, _ = front.WriteToUDP(buf[:n], client.Load())
		}
	}()
	return front.LocalAddr().(*net.UDPAddr) //nolint:forcetypeassert // a UDP socket
}

// TestMetricsData: the QUIC bytes go to k6's dialer counters, which k6 turns
// into data_sent and data_received at the end of the iteration.
func TestMetricsData(t *testing.T) {
	t.Parallel()

	e := newTestEnv(t)
	_, err := e.run(`http3.post("BASE/upload", "x".repeat(10000))`)
	require.NoError(t, err)
	sent, received := atomic.LoadInt64(&e.dialer.BytesWritten), atomic.LoadInt64(&e.dialer.BytesRead)
	assert.Greater(t, sent, int64(10000), "the body, the headers, the handshake")
	assert.Greater(t, received, int64(1000), "the handshake (certificate) and the response")

	_, err = e.run(`http3.get("BASE/")`)
	require.NoError(t, err)
	assert.Greater(t, atomic.LoadInt64(&e.dialer.BytesRead), received+upstream.RootBodySize, "the / body")

	// what k6 does at the end of an iteration
	ioSamples := e.dialer.IOSamples(time.Now(), e.state.Tags.GetCurrentValues(), e.state.BuiltinMetrics).GetSamples()
	require.Len(t, ioSamples, 2)
	assert.Equal(t, "data_sent", ioSamples[0].Metric.Name)
	assert.Greater(t, ioSamples[0].Value, 10000.0)
	assert.Equal(t, "data_received", ioSamples[1].Metric.Name)
	assert.Greater(t, ioSamples[1].Value, 5000.0)

	// a closed connection is counted one last time, then forgotten
	e.mi.pool.closeAll()
	eventually(t, func() bool { return e.mi.pool.openConns() == 0 }, "the connection is forgotten")
}

func TestExpectedStatus(t *testing.T) {
	t.Parallel()

	for status, want := range map[int]bool{0: false, 100: false, 199: false, 200: true, 302: true, 399: true, 400: false, 503: false} {
		assert.Equal(t, want, expectedStatus(status), status)
	}
}
