package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/js/modulestest"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
	"go.k6.io/k6/v2/lib/types"
	"go.k6.io/k6/v2/metrics"
	"gopkg.in/guregu/null.v3"
)

// testHost is a name httptest's certificate is valid for; the VU's hosts option maps it to
// 127.0.0.1, as proxybench maps bench.test.
const testHost = "example.com"

// testEnv is one VU with the module bound to the global `load`, in its VU context, with a
// state like k6 run's: k6's dialer with a hosts mapping, a TLS config that trusts the test
// server, the default system tags.
type testEnv struct {
	rt      *modulestest.Runtime
	samples chan metrics.SampleContainer
	cancel  context.CancelFunc
}

func newTestEnv(t testing.TB, roots *x509.CertPool) *testEnv {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	mi, ok := New().NewModuleInstance(rt.VU).(*ModuleInstance)
	require.True(t, ok)
	require.NoError(t, rt.VU.Runtime().Set("load", mi.Exports().Named))

	hosts, err := types.NewHosts(map[string]types.Host{testHost: {IP: net.ParseIP("127.0.0.1")}})
	require.NoError(t, err)
	dialer := netext.NewDialer(net.Dialer{}, netext.NewResolver(net.LookupIP, 0, types.DNSfirst, types.DNSpreferIPv4))
	dialer.Hosts = hosts
	logger := logrus.New()
	logger.SetOutput(io.Discard)
	samples := make(chan metrics.SampleContainer, 1<<16)
	state := &lib.State{
		Options:   lib.Options{SystemTags: &metrics.DefaultSystemTagSet, UserAgent: null.StringFrom("load-test")},
		Logger:    logger,
		Dialer:    dialer,
		TLSConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		Samples:   samples,
		Tags: lib.NewVUStateTags(rt.VU.InitEnvField.Registry.RootTagSet().WithTagsFromMap(map[string]string{
			"group": lib.RootGroupPath, "scenario": "measured",
		})),
		BuiltinMetrics: rt.BuiltinMetrics,
	}
	rt.MoveToVUContext(state)
	ctx, cancel := context.WithCancel(context.Background())
	rt.VU.CtxField = ctx
	t.Cleanup(cancel)
	return &testEnv{rt: rt, samples: samples, cancel: cancel}
}

// run evaluates js on the event loop.
func (e *testEnv) run(t testing.TB, js string) sobek.Value {
	t.Helper()
	v, err := e.rt.RunOnEventLoop(js)
	require.NoError(t, err)
	return v
}

// tally is what the samples say, summed as k6's sinks sum them.
type tally struct {
	reqsByStatus             map[string]float64 // http_reqs by status tag
	durations, waits, checks int
	checksPassed, failed     float64
	newConns, late           float64
	bad                      map[string]float64 // bad_responses by why
	differsAt                []float64          // body_differs_at samples
	lost                     map[string]float64 // connections_lost by why
	wrongProto               float64
	protos                   map[string]bool
	errorCodes               map[string]bool
	// every metric's samples, their sum and their largest value, by name
	samples   map[string]int
	sums, max map[string]float64
}

func (e *testEnv) tally() tally {
	t := tally{
		reqsByStatus: map[string]float64{}, bad: map[string]float64{}, lost: map[string]float64{}, protos: map[string]bool{}, errorCodes: map[string]bool{},
		samples: map[string]int{}, sums: map[string]float64{}, max: map[string]float64{},
	}
	for {
		select {
		case sc := <-e.samples:
			for _, s := range sc.GetSamples() {
				tags := s.Tags.Map()
				t.samples[s.Metric.Name]++
				t.sums[s.Metric.Name] += s.Value
				t.max[s.Metric.Name] = max(t.max[s.Metric.Name], s.Value)
				switch s.Metric.Name {
				case "http_reqs":
					t.reqsByStatus[tags["status"]] += s.Value
					t.protos[tags["proto"]] = true
					if c := tags["error_code"]; c != "" {
						t.errorCodes[c] = true
					}
				case "http_req_duration":
					t.durations++
				case "http_req_waiting":
					t.waits++
				case "http_req_failed":
					t.failed += s.Value
				case "checks":
					t.checks++
					t.checksPassed += s.Value
				case "new_connections":
					t.newConns += s.Value
				case "late_requests":
					t.late += s.Value
				case "bad_responses":
					t.bad[tags["why"]] += s.Value
				case "wrong_proto":
					t.wrongProto += s.Value
				case "body_differs_at":
					t.differsAt = append(t.differsAt, s.Value)
				case "connections_lost":
					t.lost[tags["why"]] += s.Value
				}
			}
		default:
			return t
		}
	}
}

func (t tally) requests() float64 {
	n := 0.0
	for _, v := range t.reqsByStatus {
		n += v
	}
	return n
}

// bodyOf answers 200 with n bytes.
func bodyOf(n int) http.HandlerFunc {
	return bodyIs(strings.Repeat("x", n))
}

// bodyIs answers 200 with body.
func bodyIs(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, body) }
}

// serve starts a test server: "h1c" cleartext, "h1" TLS without h2, "h2" TLS with h2.
func serve(t testing.TB, proto string, h http.Handler, before ...func(*http.Server)) (srv *httptest.Server, url string) {
	t.Helper()
	srv = httptest.NewUnstartedServer(h)
	for _, f := range before {
		f(srv.Config) // before it serves: the server reads its Config from then on
	}
	return srv, start(t, proto, srv)
}

// start starts srv as serve does, and returns its URL.
func start(t testing.TB, proto string, srv *httptest.Server) (url string) {
	t.Helper()
	switch proto {
	case "h1c":
		srv.Start()
	case "h1":
		srv.StartTLS()
	case "h2":
		srv.EnableHTTP2 = true
		srv.StartTLS()
	}
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	scheme := "https"
	if proto == "h1c" {
		scheme = "http"
	}
	return scheme + "://" + testHost + ":" + port + "/"
}

// roots trusts srv's certificate (nil for cleartext).
func roots(srv *httptest.Server) *x509.CertPool {
	if srv.Certificate() == nil {
		return nil
	}
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}

// within is until for run(): ms since the epoch, d from now.
func within(d time.Duration) int64 {
	return time.Now().Add(d).UnixMilli()
}

// serveH2 starts an h2 server that allows maxStreams concurrent streams (0: Go's default).
func serveH2(t testing.TB, h http.Handler, maxStreams uint32) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	if maxStreams > 0 {
		srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: int(maxStreams)}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return srv, "https://" + testHost + ":" + port + "/"
}

// replaceURL puts url for URL in a JS options literal.
func replaceURL(opts, url string) string {
	return strings.ReplaceAll(opts, "URL", url)
}
