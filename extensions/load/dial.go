package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
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

// dial opens the connection of one loop with td (the VU's dialer: the hosts option, k6's byte
// counters and blocked hostnames apply) and, over TLS, the VU's TLS configuration (its roots
// verify the certificate, never skipped) and the ALPN of the protocol measured. under, when
// set, wraps the TCP connection before TLS goes on it. times, when set, gets the handshakes'.
func dial(ctx context.Context, state *lib.State, td *tcpDialer, p *plan, under func(net.Conn) net.Conn, times *dialTimes) (net.Conn, error) {
	start := time.Now()
	conn, err := td.dial(ctx, state, p.addr)
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
		return nil, fmt.Errorf("%w with %s: %w", errHandshake, p.addr, err)
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

// errWrongProto is a connection that would not carry the protocol measured, errHandshake one
// whose TLS handshake failed.
var (
	errWrongProto = errors.New("wrong protocol")
	errHandshake  = errors.New("TLS handshake")
)

// readBuffered is a connection read through a buffer whose fill a loop can see: under TLS, it
// tells whether more records have already arrived than the one being decrypted.
type readBuffered struct {
	net.Conn
	r *bufio.Reader
}

func (c *readBuffered) Read(b []byte) (int, error) { return c.r.Read(b) }

// tcpDialer opens a Client's TCP connections. With k6's own dialer, it has that dialer resolve
// the plan's address once (the hosts option, blocked hostnames and IPs, DNS: k6's rules) and
// dials the address it got, each connection wrapped in k6's byte counters as k6 wraps it,
// without keep-alive probes (wrk and h2load set none; a fresh connection carries one request).
// Resolving again for every connection took 3.4% of the client's CPU on fresh cleartext
// requests (pprof), and keep-alive four setsockopt calls a connection. With any other dialer,
// or a local address to bind (k6's local-ips), it dials through the VU's dialer as it is.
type tcpDialer struct {
	of   lib.DialContexter // the dialer it was made for
	k6   *netext.Dialer    // nil: dial through of
	addr string            // the address k6's dialer resolved: an IP and a port
	d    net.Dialer
}

// dialerFor is c's dialer for state's, made when the VU's dialer is not the one it was made for.
func (c *Client) dialerFor(state *lib.State) (*tcpDialer, error) {
	if c.tcp != nil && c.tcp.of == state.Dialer {
		return c.tcp, nil
	}
	td := &tcpDialer{of: state.Dialer}
	if k6d, ok := state.Dialer.(*netext.Dialer); ok && k6d.LocalAddr == nil {
		ip, port, err := k6d.ResolveAddr(c.p.addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", c.p.addr, err)
		}
		// an address, not Dialer.DialTCP: that binds every socket to its local address, the
		// zero one too (a bind syscall, and the port taken as bind takes it, not as connect)
		td.k6, td.addr = k6d, net.JoinHostPort(ip.String(), strconv.Itoa(port))
		td.d = net.Dialer{Timeout: k6d.Timeout, KeepAlive: -1}
	}
	c.tcp = td
	return td, nil
}

func (td *tcpDialer) dial(ctx context.Context, state *lib.State, addr string) (net.Conn, error) {
	if td.k6 == nil {
		return state.Dialer.DialContext(ctx, "tcp", addr)
	}
	conn, err := td.d.DialContext(ctx, "tcp", td.addr)
	if err != nil {
		return nil, err
	}
	return &netext.Conn{Conn: conn, BytesRead: &td.k6.BytesRead, BytesWritten: &td.k6.BytesWritten}, nil
}
