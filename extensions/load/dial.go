package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"go.k6.io/k6/v2/lib"
)

// k6's error codes (k6 docs, "Error codes") for what the loop can tell apart.
const (
	errCodeGeneric = 1000
	errCodeTimeout = 1050
)

func errorCode(err error) int {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return errCodeTimeout
	}
	return errCodeGeneric
}

// alpn is what the loop offers for each protocol: HTTP/1.1 over TLS offers http/1.1 only, so
// the protocol measured is never left to the server's choice.
var alpn = map[string]string{"h1": "http/1.1", "h2": "h2"}

// dialTimes are a connection's handshakes, as k6/http times them: http_req_connecting (TCP)
// and http_req_tls_handshaking.
type dialTimes struct {
	connecting, tlsHandshaking time.Duration
}

// dial opens the connection of one loop with the VU's dialer (the hosts option, k6's byte
// counters and blocked hostnames apply) and, over TLS, the VU's TLS configuration (its roots
// verify the certificate, never skipped) and the ALPN of the protocol measured. under, when
// set, wraps the TCP connection before TLS goes on it. times, when set, gets the handshakes'.
func dial(ctx context.Context, state *lib.State, p *plan, under func(net.Conn) net.Conn, times *dialTimes) (net.Conn, error) {
	start := time.Now()
	conn, err := state.Dialer.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", p.addr, err)
	}
	connected := time.Now()
	if times != nil {
		times.connecting = connected.Sub(start)
	}
	if under != nil {
		conn = under(conn)
	}
	if !p.tls {
		return conn, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12} //nolint:gosec // k6's own config replaces it below when the VU has one
	if state.TLSConfig != nil {
		cfg = state.TLSConfig.Clone()
	}
	cfg.ServerName = p.host
	cfg.NextProtos = []string{alpn[p.Proto]}
	tc := tls.Client(conn, cfg)
	// a handshake the server never finishes fails within the request timeout, as k6/http's
	_ = conn.SetDeadline(time.Now().Add(p.timeout))
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", p.addr, err)
	}
	if times != nil {
		times.tlsHandshaking = time.Since(connected)
	}
	got := tc.ConnectionState().NegotiatedProtocol
	if p.Proto == "h2" && got != "h2" {
		_ = conn.Close()
		return nil, fmt.Errorf("%w: %s offered h2 by ALPN and %s chose %q", errWrongProto, p.URL, p.addr, got)
	}
	return tc, nil
}

// errWrongProto is a connection that would not carry the protocol measured.
var errWrongProto = errors.New("wrong protocol")

// readBuffered is a connection read through a buffer whose fill a loop can see: under TLS, it
// tells whether more records have already arrived than the one being decrypted.
type readBuffered struct {
	net.Conn
	r *bufio.Reader
}

func (c *readBuffered) Read(b []byte) (int, error) { return c.r.Read(b) }
