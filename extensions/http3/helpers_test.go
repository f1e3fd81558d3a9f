package http3

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
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

	"github.com/proxybench/proxybench/extensions/http3/internal/h3server"
)

// benchHost is the name the test server's certificate is for; the VU's hosts
// option maps it to 127.0.0.1, as proxybench maps bench.test.
const benchHost = "bench.test"

var (
	caOnce sync.Once
	testCA *h3server.CA
	caErr  error
)

// ca is the throwaway CA of the tests (one per test binary: key generation
// is the slow part).
func ca(t testing.TB) *h3server.CA {
	t.Helper()
	caOnce.Do(func() { testCA, caErr = h3server.NewCA(benchHost, "127.0.0.1") })
	require.NoError(t, caErr)
	return testCA
}

// startServer starts a quic-go HTTP/3 server on 127.0.0.1:0 (UDP).
func startServer(t testing.TB) *h3server.Server {
	t.Helper()
	srv, err := h3server.Start("127.0.0.1:0", ca(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// testEnv is one VU with the module bound to the global `http3`, in its VU
// context, with a state like k6 run's: k6's dialer with a hosts mapping, a
// TLS config that trusts the test CA, the default system tags.
type testEnv struct {
	rt      *modulestest.Runtime
	mi      *ModuleInstance
	state   *lib.State
	dialer  *netext.Dialer
	samples chan metrics.SampleContainer
	srv     *h3server.Server
	base    string // https://bench.test:PORT
}

type stateOption func(*lib.State)

func newTestEnv(t testing.TB, opts ...stateOption) *testEnv {
	t.Helper()
	srv := startServer(t)
	return newTestEnvFor(t, srv, opts...)
}

func newTestEnvFor(t testing.TB, srv *h3server.Server, opts ...stateOption) *testEnv {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	mi, ok := New().NewModuleInstance(rt.VU).(*ModuleInstance)
	require.True(t, ok)
	require.NoError(t, rt.VU.Runtime().Set("http3", mi.Exports().Named))

	hosts, err := types.NewHosts(map[string]types.Host{benchHost: {IP: net.ParseIP("127.0.0.1")}})
	require.NoError(t, err)
	dialer := netext.NewDialer(net.Dialer{}, netext.NewResolver(net.LookupIP, 0, types.DNSfirst, types.DNSpreferIPv4))
	dialer.Hosts = hosts

	logger := logrus.New()
	logger.SetOutput(io.Discard)
	registry := rt.VU.InitEnvField.Registry
	samples := make(chan metrics.SampleContainer, 100000)
	state := &lib.State{
		Options: lib.Options{
			SystemTags:   &metrics.DefaultSystemTagSet,
			MaxRedirects: null.IntFrom(10),
			UserAgent:    null.StringFrom("http3-test"),
			Batch:        null.IntFrom(20),
			BatchPerHost: null.IntFrom(0),
		},
		Logger:     logger,
		Dialer:     dialer,
		TLSConfig:  &tls.Config{RootCAs: ca(t).Pool, MinVersion: tls.VersionTLS12},
		BufferPool: lib.NewBufferPool(),
		Samples:    samples,
		Tags: lib.NewVUStateTags(registry.RootTagSet().WithTagsFromMap(map[string]string{
			"group":    lib.RootGroupPath,
			"scenario": "default",
		})),
		BuiltinMetrics: rt.BuiltinMetrics,
	}
	for _, o := range opts {
		o(state)
	}
	rt.MoveToVUContext(state)
	t.Cleanup(mi.pool.closeAll)

	return &testEnv{
		rt: rt, mi: mi, state: state, dialer: dialer, samples: samples, srv: srv,
		base: fmt.Sprintf("https://%s:%d", benchHost, srv.Addr.Port),
	}
}

// run runs js on the event loop, with BASE replaced by the server's URL.
func (e *testEnv) run(js string) (sobek.Value, error) {
	return e.rt.RunOnEventLoop(strings.ReplaceAll(js, "BASE", e.base))
}

// result runs js, an expression, and decodes JSON.stringify of its value.
func (e *testEnv) result(t testing.TB, js string, out any) {
	t.Helper()
	v, err := e.run("JSON.stringify(" + js + ")")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(v.String()), out), v.String())
}

// jsResponse is a response as a script sees it.
type jsResponse struct {
	Status     int               `json:"status"`
	Proto      string            `json:"proto"`
	Body       *string           `json:"body"`
	Headers    map[string]string `json:"headers"`
	URL        string            `json:"url"`
	Error      string            `json:"error"`
	ErrorCode  int               `json:"error_code"`
	TLSVersion string            `json:"tls_version"`
	Timings    struct {
		Blocked        float64 `json:"blocked"`
		Connecting     float64 `json:"connecting"`
		TLSHandshaking float64 `json:"tls_handshaking"`
		Sending        float64 `json:"sending"`
		Waiting        float64 `json:"waiting"`
		Receiving      float64 `json:"receiving"`
		Duration       float64 `json:"duration"`
	} `json:"timings"`
	Request struct {
		Method string `json:"method"`
		URL    string `json:"url"`
	} `json:"request"`
}

// drain returns the samples emitted so far.
func (e *testEnv) drain() []metrics.Sample {
	var out []metrics.Sample
	for {
		select {
		case sc := <-e.samples:
			out = append(out, sc.GetSamples()...)
		default:
			return out
		}
	}
}

// byMetric keeps the samples of one metric.
func byMetric(samples []metrics.Sample, name string) []metrics.Sample {
	var out []metrics.Sample
	for _, s := range samples {
		if s.Metric.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// eventually waits up to 5 s for cond.
func eventually(t testing.TB, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf(msg, args...)
}

// deadUDPPort returns a loopback UDP port nothing listens on.
func deadUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	port := c.LocalAddr().(*net.UDPAddr).Port //nolint:forcetypeassert // a UDP socket
	require.NoError(t, c.Close())
	return port
}

// newIteration gives the VU a new context, as k6 does for every iteration,
// and ends the previous one.
func (e *testEnv) newIteration(t testing.TB) {
	t.Helper()
	prev := e.rt.VU.CtxField
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.rt.VU.CtxField = ctx
	if c, ok := prevCancels.LoadAndDelete(prev); ok {
		c.(context.CancelFunc)() //nolint:forcetypeassert // prevCancels holds nothing else
	}
	prevCancels.Store(ctx, cancel)
}

var prevCancels sync.Map // context.Context → its cancel func
