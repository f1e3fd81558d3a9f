package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/lib"
)

// Where a session was when it ended.
const (
	stageConnect = "connect"
	stageTLS     = "tls"
	stageUpgrade = "upgrade"
	stageWelcome = "welcome"
	stageEcho    = "echo"
)

// Result is what ws.echo() returns.
type Result struct {
	Status    int     // the upgrade's status; 0 when no response head came
	Welcome   *string // the server's first message; nil when none came
	Echo      *string // the answer to the message; nil when none came
	ConnectMS float64 // from the dial to the upgrade's response head (or its failure)
	EchoMS    float64 // from sending the message to its echo
	Error     string
	// Failure says why the session failed, in one word of Failures; "" when it did not.
	Failure string
}

// Failures are the words of Result.Failure, low-cardinality as a metric tag:
//
//	no_upgrade    no 101 within the timeout: the connect, the TLS handshake or the upgrade hung
//	not_upgraded  the upgrade was answered, without a 101
//	no_welcome    upgraded, then no first message within the timeout
//	no_echo       the welcome came, the echo not within the timeout
//	refused       the connection was refused
//	reset         the connection was reset or closed before the echo
//	tls           the TLS handshake failed (certificate, protocol)
//	other         anything else (the VU's context ended, a bad frame)
var Failures = []string{"no_upgrade", "not_upgraded", "no_welcome", "no_echo", "refused", "reset", "tls", "other"}

// echo is ws.echo(url, message, [params]): it blocks the VU, as k6/http does, until the
// session has ended, at the latest when its timeout has passed since the dial.
func (mi *ModuleInstance) echo(urlV, messageV, paramsV sobek.Value) (sobek.Value, error) {
	state := mi.vu.State()
	if state == nil {
		return nil, errors.New("ws.echo() can't be called in the init context")
	}
	rt := mi.vu.Runtime()
	s, err := parseSession(rt, state, urlV, messageV, paramsV)
	if err != nil {
		return nil, err
	}
	return s.run(mi.vu.Context(), state).toJS(rt), nil
}

// run dials, upgrades, reads the welcome, sends the message and reads its echo, every step
// under one deadline: the connection's, set from the context's (gorilla/websocket does so for
// the upgrade, and clears it after), and moved to now when the context ends first (the VU's:
// a scenario's end), so that the session ends at once.
func (s *session) run(vuCtx context.Context, state *lib.State) *Result {
	start := time.Now()
	deadline := start.Add(s.timeout)
	sessionCtx, cancel := context.WithDeadline(vuCtx, deadline)
	defer cancel()
	m := newEmitter(vuCtx, state, s)

	r := &Result{}
	stage := stageConnect
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := state.Dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// gorilla/websocket bounds the upgrade by its context's deadline, not by its end (and
		// ends the context it dials with when the upgrade is done)
		context.AfterFunc(sessionCtx, func() { _ = c.SetDeadline(time.Now()) })
		stage = stageUpgrade
		return c, nil
	}
	d := websocket.Dialer{
		NetDialContext: dial,
		NetDialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			stage = stageTLS
			tc := tls.Client(c, s.tlsConfig(state))
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = c.Close()
				return nil, err
			}
			stage = stageUpgrade
			return tc, nil
		},
		HandshakeTimeout: s.timeout,
	}
	conn, resp, err := d.DialContext(sessionCtx, s.url.String(), nil)
	r.ConnectMS = ms(time.Since(start))
	if resp != nil {
		r.Status = resp.StatusCode
		_ = resp.Body.Close()
	}
	m.connected(start, r)
	if err != nil {
		return r.fail(stage, err)
	}
	defer func() { _ = conn.Close() }()
	// gorilla/websocket clears the connection's deadline after the upgrade: set it again (the
	// context's end still cuts it short: dial)
	_ = conn.NetConn().SetDeadline(deadline)

	stage = stageWelcome
	_, welcome, err := conn.ReadMessage()
	if err != nil {
		return r.fail(stage, err)
	}
	m.received()
	r.Welcome = str(welcome)

	stage = stageEcho
	sentAt := time.Now()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(s.message)); err != nil {
		return r.fail(stage, err)
	}
	m.sent()
	_, echo, err := conn.ReadMessage()
	if err != nil {
		return r.fail(stage, err)
	}
	r.EchoMS = ms(time.Since(sentAt))
	m.received()
	r.Echo = str(echo)
	// a clean close, without waiting for the server's answer: the session is measured
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), deadline)
	m.ended(start)
	return r
}

// tlsConfig is the VU's TLS configuration offering HTTP/1.1 only by ALPN, as k6/websockets
// does: a WebSocket upgrade is HTTP/1.1.
func (s *session) tlsConfig(state *lib.State) *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if state.TLSConfig != nil {
		cfg = state.TLSConfig.Clone()
	}
	cfg.NextProtos = []string{"http/1.1"}
	if cfg.ServerName == "" {
		cfg.ServerName = s.url.Hostname()
	}
	return cfg
}

// fail records err, met at stage.
func (r *Result) fail(stage string, err error) *Result {
	r.Error = fmt.Sprintf("%s: %v", stage, err)
	r.Failure = failure(stage, err)
	return r
}

// failure is the word of Failures for err, met at stage.
func failure(stage string, err error) string {
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	var header tls.RecordHeaderError
	switch {
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		switch stage {
		case stageWelcome:
			return "no_welcome"
		case stageEcho:
			return "no_echo"
		default:
			return "no_upgrade"
		}
	case errors.Is(err, websocket.ErrBadHandshake):
		return "not_upgraded"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &certErr), errors.As(err, &alert), errors.As(err, &header):
		return "tls"
	case isReset(err):
		return "reset"
	default:
		return "other"
	}
}

func isReset(err error) bool {
	var closeErr *websocket.CloseError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &closeErr) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func ms(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

func str(b []byte) *string {
	s := string(b)
	return &s
}

// toJS is the result as a script sees it: welcome and echo null when none came.
func (r *Result) toJS(rt *sobek.Runtime) sobek.Value {
	o := rt.NewObject()
	text := func(s *string) sobek.Value {
		if s == nil {
			return sobek.Null()
		}
		return rt.ToValue(*s)
	}
	for k, v := range map[string]sobek.Value{
		"status":     rt.ToValue(r.Status),
		"welcome":    text(r.Welcome),
		"echo":       text(r.Echo),
		"connect_ms": rt.ToValue(r.ConnectMS),
		"echo_ms":    rt.ToValue(r.EchoMS),
		"error":      rt.ToValue(r.Error),
		"failure":    rt.ToValue(r.Failure),
	} {
		_ = o.Set(k, v)
	}
	return o
}
