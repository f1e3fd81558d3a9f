package http3

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"
	quichttp3 "github.com/quic-go/quic-go/http3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
	"go.k6.io/k6/v2/lib/types"
	"gopkg.in/guregu/null.v3"

	"github.com/proxybench/proxybench/extensions/http3/internal/h3server"
	"github.com/proxybench/proxybench/extensions/upstream"
)

func TestRequest(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		js     string
		check  func(t *testing.T, r jsResponse)
		server func(t *testing.T, srv *h3server.Server)
	}{
		{
			name: "get",
			js:   `http3.get("BASE/")`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 200, r.Status)
				assert.Equal(t, "HTTP/3.0", r.Proto)
				require.NotNil(t, r.Body)
				assert.Equal(t, string(upstream.Pattern(upstream.RootBodySize)), *r.Body)
				assert.Equal(t, strconv.Itoa(upstream.RootBodySize), r.Headers["Content-Length"])
				assert.Equal(t, "tls1.3", r.TLSVersion)
				assert.Empty(t, r.Error)
				assert.Equal(t, "GET", r.Request.Method)
				assert.Greater(t, r.Timings.Duration, 0.0)
				assert.Greater(t, r.Timings.Waiting, 0.0)
			},
		},
		{
			name: "request with a method and a body",
			js:   `http3.request("POST", "BASE/upload", "hello")`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 200, r.Status)
				assert.Equal(t, `{"bytes":5}`, *r.Body)
			},
		},
		{
			name: "post an ArrayBuffer",
			js:   `http3.post("BASE/upload", new Uint8Array(1000).buffer)`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, `{"bytes":1000}`, *r.Body)
			},
		},
		{
			name: "put a form",
			js:   `http3.put("BASE/upload", {a: "1", b: "2"})`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, `{"bytes":7}`, *r.Body) // a=1&b=2
			},
		},
		{
			name: "del",
			js:   `http3.del("BASE/upload")`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 405, r.Status)
				assert.Equal(t, 1405, r.ErrorCode)
				assert.Equal(t, "POST, PUT", r.Headers["Allow"])
			},
		},
		{
			name: "head",
			js:   `http3.head("BASE/")`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 200, r.Status)
				assert.Empty(t, *r.Body)
			},
		},
		{
			name: "headers and Host as :authority",
			js:   `http3.get("BASE/echo", {headers: {"Host": "vhost.example", "X-Custom": "yes"}})`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, "vhost.example", r.Headers["X-Authority"])
				assert.Equal(t, "yes", r.Headers["X-Custom"])
				assert.Equal(t, "http3-test", r.Headers["X-User-Agent"])
				assert.Equal(t, "HTTP/3.0", *r.Body)
			},
			server: func(t *testing.T, srv *h3server.Server) {
				assert.Equal(t, 1, srv.Authorities()["vhost.example"])
			},
		},
		{
			name: "authority is the URL's host without a Host header",
			js:   `http3.get("BASE/echo")`,
			check: func(t *testing.T, r jsResponse) {
				assert.True(t, strings.HasPrefix(r.Headers["X-Authority"], benchHost+":"), r.Headers["X-Authority"])
			},
		},
		{
			name: "responseType none",
			js:   `http3.get("BASE/", {responseType: "none"})`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 200, r.Status)
				assert.Nil(t, r.Body)
			},
		},
		{
			name: "status 404 is not an exception",
			js:   `http3.get("BASE/status/404")`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 404, r.Status)
				assert.Equal(t, 1404, r.ErrorCode)
			},
		},
		{
			name: "timeout",
			js:   `http3.get("BASE/slow?d=3s", {timeout: "200ms"})`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 0, r.Status)
				assert.Equal(t, "request timeout", r.Error)
				assert.Equal(t, 1050, r.ErrorCode)
				assert.Less(t, r.Timings.Duration, 1000.0)
			},
		},
		{
			name: "timeout in milliseconds",
			js:   `http3.get("BASE/slow?d=3s", {timeout: 150})`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 1050, r.ErrorCode)
			},
		},
		{
			name: "an http:// URL",
			js:   `http3.get("http://bench.test/")`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 0, r.Status)
				assert.Equal(t, `http3.get() needs an https:// URL (HTTP/3 runs over QUIC and TLS), got "http://bench.test/"`, r.Error)
			},
		},
		{
			name: "an unsupported param",
			js:   `http3.post("BASE/upload", "x", {jar: {}})`,
			check: func(t *testing.T, r jsResponse) {
				assert.Equal(t, 0, r.Status)
				assert.Equal(t, "http3.post() does not support params.jar "+
					"(supported: headers, redirects, responseType, tags, throw, timeout)", r.Error)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			var r jsResponse
			e.result(t, tc.js, &r)
			tc.check(t, r)
			if tc.server != nil {
				tc.server(t, e.srv)
			}
		})
	}
}

func TestRequestThrow(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		js    string
		throw bool // the global throw option
		err   string
	}{
		{"params.throw on a timeout", `http3.get("BASE/slow?d=3s", {timeout: "100ms", throw: true})`, false, "request timeout"},
		{"option throw on a timeout", `http3.get("BASE/slow?d=3s", {timeout: "100ms"})`, true, "request timeout"},
		{"option throw on a bad URL", `http3.get("http://bench.test/")`, true, "http3.get() needs an https:// URL"},
		{"option throw on a bad param", `http3.get("BASE/", {timeout: "soon"})`, true, "http3.get(): invalid params.timeout"},
		{
			"bad responseType", `http3.get("BASE/", {responseType: "xml"})`, true,
			`http3.get(): invalid params.responseType "xml" (use "text", "binary" or "none")`,
		},
		{"params.throw false overrides the option", `http3.get("BASE/slow?d=3s", {timeout: "100ms", throw: false})`, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, func(s *lib.State) { s.Options.Throw = null.BoolFrom(tc.throw) })
			_, err := e.run(tc.js)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

// TestRequestErrors covers failures to connect: nothing listening, an
// untrusted certificate, a certificate for another name, TLS 1.2 only.
func TestRequestErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name      string
		url       func(e *testEnv) string
		params    string
		opts      []stateOption
		status    int
		errorCode int
		error     string
		maxTime   time.Duration
	}{
		{
			name:      "nothing listens on the UDP port, request timeout first",
			url:       func(_ *testEnv) string { return fmt.Sprintf("https://%s:%d/", benchHost, deadUDPPort(t)) },
			params:    `{timeout: "1s"}`,
			errorCode: 1050,
			error:     "request timeout",
			maxTime:   2 * time.Second,
		},
		{
			name:      "nothing listens on the UDP port, handshake timeout first",
			url:       func(_ *testEnv) string { return fmt.Sprintf("https://%s:%d/", benchHost, deadUDPPort(t)) },
			params:    `{timeout: "20s"}`,
			errorCode: 1211,
			error:     "dial: i/o timeout",
			maxTime:   7 * time.Second, // quic-go's handshake idle timeout is 5 s
		},
		{
			name:      "untrusted certificate",
			url:       func(e *testEnv) string { return e.base + "/" },
			opts:      []stateOption{func(s *lib.State) { s.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12} }},
			errorCode: 1310,
			error:     "x509: unknown authority",
			maxTime:   2 * time.Second,
		},
		{
			name: "untrusted certificate with insecureSkipTLSVerify",
			url:  func(e *testEnv) string { return e.base + "/" },
			opts: []stateOption{func(s *lib.State) {
				s.TLSConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // what the test is about
			}},
			status:  200,
			maxTime: 2 * time.Second,
		},
		{
			name: "certificate for another name",
			url:  func(e *testEnv) string { return fmt.Sprintf("https://other.test:%d/", e.srv.Addr.Port) },
			opts: []stateOption{func(s *lib.State) {
				hosts, _ := types.NewHosts(map[string]types.Host{"other.test": {IP: net.ParseIP("127.0.0.1")}})
				s.Dialer.(*netext.Dialer).Hosts = hosts //nolint:forcetypeassert // the test's state has k6's dialer
			}},
			errorCode: 1311,
			error:     "x509: certificate doesn't match hostname",
			maxTime:   2 * time.Second,
		},
		{
			name: "tlsVersion without TLS 1.3",
			url:  func(e *testEnv) string { return e.base + "/" },
			opts: []stateOption{func(s *lib.State) {
				s.TLSConfig = &tls.Config{MaxVersion: tls.VersionTLS12} //nolint:gosec // what the test is about
			}},
			errorCode: 1000,
			error:     "http3: the tlsVersion option allows at most TLS 1.2, but QUIC needs TLS 1.3",
			maxTime:   time.Second,
		},
		{
			name: "blacklisted IP",
			url:  func(e *testEnv) string { return e.base + "/" },
			opts: []stateOption{func(s *lib.State) {
				_, ipNet, _ := net.ParseCIDR("127.0.0.0/8")
				s.Dialer.(*netext.Dialer).Blacklist = []*lib.IPNet{{IPNet: *ipNet}} //nolint:forcetypeassert // idem
			}},
			errorCode: 1110,
			error:     "ip is blacklisted",
			maxTime:   time.Second,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			for _, o := range tc.opts {
				o(e.state)
			}
			params := tc.params
			if params == "" {
				params = "{}"
			}
			start := time.Now()
			var r jsResponse
			e.result(t, fmt.Sprintf("http3.get(%q, %s)", tc.url(e), params), &r)
			assert.Less(t, time.Since(start), tc.maxTime)
			assert.Equal(t, tc.status, r.Status)
			assert.Equal(t, tc.errorCode, r.ErrorCode, r.Error)
			assert.Equal(t, tc.error, r.Error)
		})
	}
}

func TestRequestHostsMapping(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		hosts func(port int) map[string]types.Host
		url   func(port int) string
	}{
		{
			name: "name to IP, the URL's port",
			hosts: func(int) map[string]types.Host {
				return map[string]types.Host{benchHost: {IP: net.ParseIP("127.0.0.1")}}
			},
			url: func(port int) string { return fmt.Sprintf("https://%s:%d/", benchHost, port) },
		},
		{
			name: "name:443 to IP:port",
			hosts: func(port int) map[string]types.Host {
				return map[string]types.Host{benchHost + ":443": {IP: net.ParseIP("127.0.0.1"), Port: port}}
			},
			url: func(int) string { return "https://" + benchHost + "/" },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			hosts, err := types.NewHosts(tc.hosts(e.srv.Addr.Port))
			require.NoError(t, err)
			e.dialer.Hosts = hosts
			var r jsResponse
			e.result(t, fmt.Sprintf("http3.get(%q)", tc.url(e.srv.Addr.Port)), &r)
			assert.Equal(t, 200, r.Status, r.Error)
			assert.Equal(t, "HTTP/3.0", r.Proto)
		})
	}
}

// BenchmarkGet measures http3.get() from JS, the way a k6 script calls it,
// over one reused QUIC connection to a local quic-go server, samples and all.
//
//	go test -run '^$' -bench BenchmarkGet -benchtime 5s ./http3/
func BenchmarkGet(b *testing.B) {
	e := newTestEnv(b)
	done := make(chan struct{})
	go func() { // k6's output side: consume the samples
		for {
			select {
			case <-e.samples:
			case <-done:
				return
			}
		}
	}()
	defer close(done)

	v, err := e.run(`(function () {
		const r = http3.get("BASE/", {responseType: "none"});
		if (r.status !== 200) { throw new Error(r.error); }
	})`)
	require.NoError(b, err)
	get, ok := sobek.AssertFunction(v)
	require.True(b, ok)
	_, err = get(sobek.Undefined()) // dial outside of the measurement
	require.NoError(b, err)

	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := get(sobek.Undefined()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	require.Equal(b, int64(1), e.srv.Accepted(), "one QUIC connection for every request")
}

// BenchmarkGetQuicGo is BenchmarkGet's yardstick: the same request with
// quic-go's http3.Transport alone (no JS, no k6 timing nor samples), so the
// difference is what k6 and the module cost per request.
func BenchmarkGetQuicGo(b *testing.B) {
	srv := startServer(b)
	tr := &quichttp3.Transport{TLSClientConfig: &tls.Config{RootCAs: ca(b).Pool, ServerName: benchHost}}
	defer func() { _ = tr.Close() }()
	client := &http.Client{Transport: tr}
	url := fmt.Sprintf("https://127.0.0.1:%d/", srv.Addr.Port)
	get := func() {
		resp, err := client.Get(url) //nolint:noctx // a benchmark loop, never cancelled
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	get()

	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		get()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
