package ws

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/js/modulestest"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
	"go.k6.io/k6/v2/lib/types"
	"go.k6.io/k6/v2/metrics"
)

const welcome = `{"hello":"bench"}`

// jsResult mirrors what ws.echo() returns, read back through JSON.stringify so that the test
// sees exactly what a script sees.
type jsResult struct {
	Status    int     `json:"status"`
	Welcome   *string `json:"welcome"`
	Echo      *string `json:"echo"`
	ConnectMS float64 `json:"connect_ms"`
	EchoMS    float64 `json:"echo_ms"`
	Error     string  `json:"error"`
	Failure   string  `json:"failure"`
}

type testEnv struct {
	rt      *modulestest.Runtime
	samples chan metrics.SampleContainer
	cancel  context.CancelFunc
}

// newTestEnv is one VU in its VU context with the module bound to the global `ws`: k6's
// dialer, a TLS config that trusts roots (nil: the system's), the default system tags.
func newTestEnv(t *testing.T, roots *x509.CertPool) *testEnv {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	require.NoError(t, rt.VU.Runtime().Set("ws", New().NewModuleInstance(rt.VU).Exports().Named))
	logger := logrus.New()
	logger.SetOutput(io.Discard)
	samples := make(chan metrics.SampleContainer, 1000)
	rt.MoveToVUContext(&lib.State{
		Options:   lib.Options{SystemTags: &metrics.DefaultSystemTagSet},
		Logger:    logger,
		Dialer:    netext.NewDialer(net.Dialer{}, netext.NewResolver(net.LookupIP, 0, types.DNSfirst, types.DNSpreferIPv4)),
		TLSConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		Samples:   samples,
		Tags: lib.NewVUStateTags(rt.VU.InitEnvField.Registry.RootTagSet().WithTagsFromMap(map[string]string{
			"group": lib.RootGroupPath, "scenario": "ws-h1c",
		})),
		BuiltinMetrics: rt.BuiltinMetrics,
	})
	ctx, cancel := context.WithCancel(t.Context())
	rt.VU.CtxField = ctx
	t.Cleanup(cancel)
	return &testEnv{rt: rt, samples: samples, cancel: cancel}
}

func (e *testEnv) echo(t *testing.T, url, params string) (jsResult, error) {
	t.Helper()
	v, err := e.rt.RunOnEventLoop(fmt.Sprintf("JSON.stringify(ws.echo(%q, 'ping 0123', %s))", url, params))
	if err != nil {
		return jsResult{}, err
	}
	var r jsResult
	require.NoError(t, json.Unmarshal([]byte(v.String()), &r), v.String())
	return r, nil
}

// sessions are the ws_sessions samples by their status tag, and every sample's metric names.
func (e *testEnv) sessions() (byStatus map[string]float64, names map[string]int) {
	byStatus, names = map[string]float64{}, map[string]int{}
	for {
		select {
		case sc := <-e.samples:
			for _, s := range sc.GetSamples() {
				names[s.Metric.Name]++
				if s.Metric.Name == "ws_sessions" {
					byStatus[s.Tags.Map()["status"]] += s.Value
				}
			}
		default:
			return byStatus, names
		}
	}
}

// echoHandler upgrades, sends the welcome, then echoes until the client goes; with
// withholdEcho it reads the message and never answers it.
func echoHandler(withholdEcho bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		if c.WriteMessage(websocket.TextMessage, []byte(welcome)) != nil {
			return
		}
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if !withholdEcho && c.WriteMessage(mt, msg) != nil {
				return
			}
		}
	}
}

// upgradeThenSilence answers the upgrade with a 101 and then sends nothing, until the client
// goes.
func upgradeThenSilence(w http.ResponseWriter, r *http.Request) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	key := r.Header.Get("Sec-WebSocket-Key")
	_, _ = fmt.Fprintf(buf, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", acceptKey(key))
	_ = buf.Flush()
	_, _ = io.Copy(io.Discard, conn)
}

// acceptKey is RFC 6455's Sec-WebSocket-Accept for key.
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// silentListener accepts connections and never reads or writes on them: a TCP accept with no
// answer, and over TLS a ClientHello never answered.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		for _, c := range held {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

func wsURL(scheme, addr string) string { return scheme + "://" + addr + "/ws" }

func TestEcho(t *testing.T) {
	t.Parallel()
	const timeout = 400 * time.Millisecond
	params := fmt.Sprintf(`{ timeout: '%dms', tags: { name: 'the ws route' } }`, timeout.Milliseconds())

	echo := httptest.NewServer(echoHandler(false))
	t.Cleanup(echo.Close)
	tlsEcho := httptest.NewTLSServer(echoHandler(false))
	t.Cleanup(tlsEcho.Close)
	noEcho := httptest.NewServer(echoHandler(true))
	t.Cleanup(noEcho.Close)
	silence := httptest.NewServer(http.HandlerFunc(upgradeThenSilence))
	t.Cleanup(silence.Close)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no upgrade here", http.StatusBadGateway)
	}))
	t.Cleanup(refusing.Close)
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		return addr
	}()
	trusted := x509.NewCertPool()
	trusted.AddCert(tlsEcho.Certificate())

	for _, tc := range []struct {
		name, url     string
		roots         *x509.CertPool
		status        int
		failure       string
		welcome, echo bool
		// timedOut: the session can only end by its timeout
		timedOut bool
	}{
		{name: "echo", url: wsURL("ws", echo.Listener.Addr().String()), status: 101, welcome: true, echo: true},
		{name: "echo over TLS", url: wsURL("wss", tlsEcho.Listener.Addr().String()), roots: trusted, status: 101, welcome: true, echo: true},
		{name: "accepted, never answered", url: wsURL("ws", silentListener(t)), failure: "no_upgrade", timedOut: true},
		{name: "TLS handshake never finishes", url: wsURL("wss", silentListener(t)), failure: "no_upgrade", timedOut: true},
		{name: "101 then silence", url: wsURL("ws", silence.Listener.Addr().String()), status: 101, failure: "no_welcome", timedOut: true},
		{name: "welcome, no echo", url: wsURL("ws", noEcho.Listener.Addr().String()), status: 101, failure: "no_echo", welcome: true, timedOut: true},
		{name: "not upgraded", url: wsURL("ws", refusing.Listener.Addr().String()), status: 502, failure: "not_upgraded"},
		{name: "refused", url: wsURL("ws", closed), failure: "refused"},
		{name: "untrusted certificate", url: wsURL("wss", tlsEcho.Listener.Addr().String()), failure: "tls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t, tc.roots)
			start := time.Now()
			r, err := env.echo(t, tc.url, params)
			took := time.Since(start)
			require.NoError(t, err)
			assert.Equal(t, tc.status, r.Status, r.Error)
			assert.Equal(t, tc.failure, r.Failure, r.Error)
			assert.Equal(t, tc.failure == "", r.Error == "", r.Error)
			assert.Equal(t, tc.welcome, r.Welcome != nil && *r.Welcome == welcome, "welcome %v", r.Welcome)
			assert.Equal(t, tc.echo, r.Echo != nil && *r.Echo == "ping 0123", "echo %v", r.Echo)
			if tc.echo {
				assert.Positive(t, r.EchoMS)
			}
			assert.Less(t, took, timeout+time.Second/2, "the session must end within its timeout")
			if tc.timedOut {
				assert.GreaterOrEqual(t, took, timeout, "only the timeout could end it")
			}
			byStatus, names := env.sessions()
			assert.Equal(t, map[string]float64{fmt.Sprint(tc.status): 1}, byStatus, "one ws_sessions sample, tagged with the upgrade's status")
			assert.Equal(t, 1, names["ws_connecting"])
			assert.Equal(t, map[bool]int{true: 1}[tc.echo], names["ws_session_duration"])
		})
	}
}

// A session whose VU context ends (a scenario's end) ends at once, whatever its timeout.
func TestEchoEndsWithTheVU(t *testing.T) {
	t.Parallel()
	silence := httptest.NewServer(http.HandlerFunc(upgradeThenSilence))
	t.Cleanup(silence.Close)
	for _, url := range []string{wsURL("ws", silentListener(t)), wsURL("ws", silence.Listener.Addr().String())} {
		env := newTestEnv(t, nil)
		time.AfterFunc(200*time.Millisecond, env.cancel)
		start := time.Now()
		r, err := env.echo(t, url, `{ timeout: '30s' }`)
		require.NoError(t, err)
		assert.NotEmpty(t, r.Failure, url)
		assert.Less(t, time.Since(start), 2*time.Second, "%s: the VU's end must end the session", url)
	}
}

func TestEchoParams(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	for params, want := range map[string]string{
		`{ timeout: 0 }`:      "params.timeout must be positive",
		`{ timeout: 'soon' }`: "invalid params.timeout",
		`{ timeut: '1s' }`:    `unknown param "timeut"`,
		`{ tags: { a: {} } }`: "invalid params.tags",
	} {
		_, err := env.echo(t, "ws://127.0.0.1:1/ws", params)
		require.Error(t, err, params)
		assert.Contains(t, err.Error(), want, params)
	}
	_, err := env.echo(t, "http://127.0.0.1:1/ws", "undefined")
	require.ErrorContains(t, err, "needs a ws:// or wss:// url")
}
