package http3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
	"go.k6.io/k6/v2/lib/netext/httpext"
	"golang.org/x/net/ipv4"
)

// keepAlivePeriod keeps an idle QUIC connection open between iterations, as
// TCP keep-alive does for k6/http's connections (Go's default period, 15 s).
// Without it, QUIC's idle timeout (30 s) would close a VU's connection during a
// long sleep and the next request would pay for a new handshake.
const keepAlivePeriod = 15 * time.Second

// closeCode is the code a connection is closed with when the VU is done with
// it: H3_NO_ERROR, a graceful close (RFC 9114, section 8.1).
const closeCode = quic.ApplicationErrorCode(http3.ErrCodeNoError)

// pool is one VU's HTTP/3 client side: the QUIC connections it opened and how
// they are reused, following the k6 options in the VU's state as k6/http does:
//
//   - by default, one http3.Transport for the VU: one QUIC connection per
//     authority (host:port), reused across iterations, concurrent requests
//     (http3.batch) as streams on it;
//   - noVUConnectionReuse: a new transport for each iteration, closed when
//     the iteration ends;
//   - noConnectionReuse: a new transport, so a new QUIC connection, for every
//     request, closed as soon as its response body has been read.
//
// Each QUIC connection has its own UDP socket, as each TCP connection has its
// own port, so "C connections" means C sockets whatever the mode.
type pool struct {
	mu         sync.Mutex
	shared     *http3.Transport // nil until the first request, and after closeAll
	sharedIter context.Context  // the iteration shared belongs to (noVUConnectionReuse)
	lastCtx    context.Context  // the VU context of the latest request
	conns      map[*quic.Conn]*trackedConn
}

func newPool() *pool {
	return &pool{conns: make(map[*quic.Conn]*trackedConn)}
}

// roundTripper is the http.RoundTripper that k6's httpext.MakeRequest drives
// (through state.Transport) for one request or one batch.
type roundTripper struct {
	pool  *pool
	state *lib.State      // the VU's own state
	iter  context.Context // the VU context: one per iteration in k6
}

var _ http.RoundTripper = &roundTripper{}

// RoundTrip sends req over HTTP/3 on a connection chosen by the reuse options.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.WithContext(dialedTrace(req.Context()))
	if rt.state.Options.NoConnectionReuse.Bool {
		return rt.pool.roundTripFresh(rt.state, req)
	}
	tr, err := rt.pool.transport(rt.iter, rt.state, rt.state.Options.NoVUConnectionReuse.Bool)
	if err != nil {
		return nil, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		rt.pool.countData(rt.state)
		return nil, err
	}
	resp.Body = &doneBody{ReadCloser: resp.Body, done: func() { rt.pool.countData(rt.state) }, ctx: req.Context()}
	return resp, nil
}

// roundTripFresh makes req on a new QUIC connection and closes it once the
// response body is read. The close runs in the background so that it isn't
// timed as part of http_req_receiving (k6's tracer stops after the body).
func (p *pool) roundTripFresh(state *lib.State, req *http.Request) (*http.Response, error) {
	tr, err := p.newTransport(state)
	if err != nil {
		return nil, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		go closeTransport(tr)
		return nil, err
	}
	resp.Body = &doneBody{ReadCloser: resp.Body, done: func() { go closeTransport(tr) }, ctx: req.Context()}
	return resp, nil
}

// transport returns the transport for reused connections, creating it on the
// first request (and, with perIteration, on the first request of each
// iteration, closing it when that iteration ends).
func (p *pool) transport(iter context.Context, state *lib.State, perIteration bool) (*http3.Transport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shared != nil && (!perIteration || p.sharedIter == iter) {
		return p.shared, nil
	}
	tr, err := p.newTransport(state)
	if err != nil {
		return nil, err
	}
	if old := p.shared; old != nil {
		go closeTransport(old)
	}
	p.shared, p.sharedIter = tr, iter
	if perIteration && iter != nil {
		context.AfterFunc(iter, func() { p.dropShared(tr) })
	}
	return tr, nil
}

// dropShared closes tr, and forgets it if it still is the shared transport.
func (p *pool) dropShared(tr *http3.Transport) {
	p.mu.Lock()
	if p.shared == tr {
		p.shared, p.sharedIter = nil, nil
	}
	p.mu.Unlock()
	closeTransport(tr)
}

// closeAll closes every connection of the VU with H3_NO_ERROR. The pool stays
// usable: a later request dials again.
func (p *pool) closeAll() {
	p.mu.Lock()
	tr := p.shared
	p.shared, p.sharedIter = nil, nil
	conns := make([]*quic.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()

	if tr != nil {
		closeTransport(tr)
	}
	for _, c := range conns {
		_ = c.CloseWithError(closeCode, "")
	}
}

// used records the VU context a request is made in.
func (p *pool) used(ctx context.Context) {
	p.mu.Lock()
	p.lastCtx = ctx
	p.mu.Unlock()
}

// closeIfUsedIn closes every connection if the latest request was made in
// ctx. k6 creates the VUs of setup(), teardown() and handleSummary() with the
// context they run in, so their connections close when it ends; the VUs of
// the scenarios are created with a context that ends right after
// initialization, while their iterations run in contexts of their own: that
// end must not close what an iteration has started to dial.
func (p *pool) closeIfUsedIn(ctx context.Context) {
	p.mu.Lock()
	last := p.lastCtx
	p.mu.Unlock()
	if last == ctx {
		p.closeAll()
	}
}

// openConns is the number of QUIC connections of the VU still open.
func (p *pool) openConns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func closeTransport(tr *http3.Transport) {
	_ = tr.Close()
}

// newTransport returns an HTTP/3 transport that dials with the VU's settings.
func (p *pool) newTransport(state *lib.State) (*http3.Transport, error) {
	tlsConf, err := tlsConfig(state)
	if err != nil {
		return nil, err
	}
	return &http3.Transport{
		TLSClientConfig: tlsConf,
		QUICConfig:      &quic.Config{KeepAlivePeriod: keepAlivePeriod},
		// As k6/http: no Accept-Encoding added behind the script's back.
		DisableCompression: true,
		Dial: func(ctx context.Context, addr string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
			return p.dial(ctx, state, addr, tlsCfg, cfg)
		},
	}, nil
}

// tlsConfig is the VU's TLS configuration (the one k6/http uses: the
// insecureSkipTLSVerify, tlsAuth, tlsVersion options, SSLKEYLOGFILE; the
// system roots, which honour SSL_CERT_FILE, unless RootCAs is set). quic-go
// sets the ALPN (h3) and the SNI (the URL's host) on its own clone.
func tlsConfig(state *lib.State) (*tls.Config, error) {
	if state.TLSConfig == nil {
		return &tls.Config{MinVersion: tls.VersionTLS13}, nil
	}
	if maxV := state.TLSConfig.MaxVersion; maxV != 0 && maxV < tls.VersionTLS13 {
		return nil, fmt.Errorf("http3: the tlsVersion option allows at most %s, but QUIC needs TLS 1.3",
			tls.VersionName(maxV))
	}
	conf := state.TLSConfig.Clone()
	conf.MinVersion = tls.VersionTLS13
	return conf, nil
}

// dial opens a QUIC connection to addr (the URL's host:port) through k6's
// resolver, so the hosts option, the DNS settings and blacklistIPs and
// blockHostnames apply as they do to k6/http.
//
// Since http3.Transport fires the connection hooks only when it dials itself,
// dial fires them, on the trace of the request that caused the dial, so k6's
// httpext.Tracer times it:
//
//   - ConnectStart..ConnectDone: from opening the connection's UDP socket to
//     the server's first packet (its Initial): QUIC's first round trip, where
//     TCP's connect is the SYN's. Timed this way, not as the socket's opening
//     alone, which takes microseconds and showed as 0 in every table.
//   - TLSHandshakeStart..TLSHandshakeDone: the rest of the QUIC handshake
//     (TLS 1.3 in QUIC), until it is complete (conn.HandshakeComplete(); Dial,
//     unlike DialEarly, returns only then).
//
// so http_req_connecting + http_req_tls_handshaking is the time to a usable
// connection, comparable to TCP connect + TLS for HTTP/1.1 and HTTP/2.
func (p *pool) dial(
	ctx context.Context, state *lib.State, addr string, tlsCfg *tls.Config, cfg *quic.Config,
) (*quic.Conn, error) {
	raddr, err := resolveUDP(state, addr)
	if err != nil {
		return nil, err
	}
	trace := httptrace.ContextClientTrace(ctx)
	remote := raddr.String()

	if trace != nil && trace.ConnectStart != nil {
		trace.ConnectStart("udp", remote)
	}
	// answered ends connecting once: at the server's first packet, or when
	// the dial failed before any came
	var once sync.Once
	answered := func(err error) {
		once.Do(func() {
			if trace != nil && trace.ConnectDone != nil {
				trace.ConnectDone("udp", remote, err)
			}
			if err == nil && trace != nil && trace.TLSHandshakeStart != nil {
				trace.TLSHandshakeStart()
			}
		})
	}
	udp, err := net.ListenUDP("udp", localUDPAddr(state))
	if err != nil {
		answered(err)
		return nil, &net.OpError{Op: "dial", Net: "udp", Addr: raddr, Err: err}
	}

	qt := &quic.Transport{Conn: &firstPacketConn{UDPConn: udp, batch: ipv4.NewPacketConn(udp), first: func() { answered(nil) }}}
	conn, err := qt.Dial(ctx, raddr, tlsCfg, cfg)
	answered(err) // no packet came: the dial failed
	var cs tls.ConnectionState
	if err == nil {
		select {
		case <-conn.HandshakeComplete():
		case <-conn.Context().Done():
			err = context.Cause(conn.Context())
		}
		cs = conn.ConnectionState().TLS
	}
	if trace != nil && trace.TLSHandshakeDone != nil {
		trace.TLSHandshakeDone(cs, err)
	}
	if err != nil {
		_ = qt.Close()
		_ = udp.Close()
		return nil, dialError(raddr, err)
	}
	p.track(state, conn, qt, udp)
	return conn, nil
}

// firstPacketConn is the connection's UDP socket, calling first when the
// first packet arrives. It reads in batches (recvmmsg) as quic-go does with a
// bare *net.UDPConn, so every optimisation of the socket (batched reads, GSO,
// ECN) is kept; only quic-go's reading goroutine calls ReadBatch.
type firstPacketConn struct {
	*net.UDPConn
	batch *ipv4.PacketConn
	first func()
}

func (c *firstPacketConn) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	n, err := c.batch.ReadBatch(ms, flags)
	if n > 0 && c.first != nil {
		c.first()
		c.first = nil
	}
	return n, err
}

// resolveUDP resolves host:port with k6's resolver when the VU has one.
func resolveUDP(state *lib.State, addr string) (*net.UDPAddr, error) {
	if r := state.GetAddrResolver(); r != nil {
		ip, port, err := r.ResolveAddr(addr)
		if err != nil {
			return nil, err
		}
		return &net.UDPAddr{IP: ip, Port: port}, nil
	}
	return net.ResolveUDPAddr("udp", addr)
}

// localUDPAddr honours the localIPs option (k6 sets it on its dialer).
func localUDPAddr(state *lib.State) *net.UDPAddr {
	if d, ok := state.Dialer.(*netext.Dialer); ok {
		if a, ok := d.LocalAddr.(*net.TCPAddr); ok && a != nil {
			return &net.UDPAddr{IP: a.IP}
		}
	}
	return nil
}

// dialError makes quic-go's dial errors classifiable by k6 (error_code):
//   - a handshake that got no answer (nothing listens on the UDP port: QUIC
//     gets no refusal, it times out) becomes a dial timeout (1211);
//   - a server that refuses the connection (CONNECTION_REFUSED, e.g. its
//     accept queue is full) is a refused dial (1212), as a TCP RST would be;
//   - a certificate error keeps its x509 cause reachable with errors.Unwrap
//     (1310, 1311): quic-go's TransportError unwraps to several errors, which
//     k6's classification does not follow.
func dialError(raddr net.Addr, err error) error {
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &net.OpError{Op: "dial", Net: "udp", Addr: raddr, Err: err}
	}
	var transportErr *quic.TransportError
	if errors.As(err, &transportErr) && transportErr.Remote && transportErr.ErrorCode == quic.ConnectionRefused {
		return httpext.NewK6Error(dialRefusedErrorCode, "dial: connection refused", err)
	}
	var unknownAuthority x509.UnknownAuthorityError
	if errors.As(err, &unknownAuthority) {
		return &causeError{err: err, cause: unknownAuthority}
	}
	var hostname x509.HostnameError
	if errors.As(err, &hostname) {
		return &causeError{err: err, cause: hostname}
	}
	return err
}

// dialRefusedErrorCode is k6's error code for a refused dial
// (tcpDialRefusedErrorCode, unexported in httpext).
const dialRefusedErrorCode = 1212

// causeError is err, unwrapping to a single cause.
type causeError struct {
	err   error
	cause error
}

func (e *causeError) Error() string { return e.err.Error() }
func (e *causeError) Unwrap() error { return e.cause }

// trackedConn is an open QUIC connection and the bytes of it already counted.
type trackedConn struct {
	conn *quic.Conn

	mu             sync.Mutex
	sent, received uint64
}

// delta returns the bytes sent and received since the last call.
func (c *trackedConn) delta() (sent, received uint64) {
	st := c.conn.ConnectionStats()
	c.mu.Lock()
	defer c.mu.Unlock()
	sent, received = st.BytesSent-c.sent, st.BytesReceived-c.received
	c.sent, c.received = st.BytesSent, st.BytesReceived
	return sent, received
}

// track registers conn until it closes; then its last bytes are counted and
// its socket closed.
func (p *pool) track(state *lib.State, conn *quic.Conn, qt *quic.Transport, udp *net.UDPConn) {
	tc := &trackedConn{conn: conn}
	p.mu.Lock()
	p.conns[conn] = tc
	p.mu.Unlock()

	context.AfterFunc(conn.Context(), func() {
		p.mu.Lock()
		delete(p.conns, conn)
		p.mu.Unlock()
		sent, received := tc.delta()
		addData(state, sent, received)
		_ = qt.Close()
		_ = udp.Close()
	})
}

// countData adds the bytes of the VU's open connections to k6's counters.
func (p *pool) countData(state *lib.State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tc := range p.conns {
		sent, received := tc.delta()
		addData(state, sent, received)
	}
}

// doneBody calls done once, when the response body is closed.
type doneBody struct {
	io.ReadCloser
	once sync.Once
	done func()
	ctx  context.Context // the request's
}

// Read says a body that failed because its request's context ended (k6's timeout) failed for
// that, as net/http's bodies do: quic-go cancels the stream and says only "stream canceled
// (H3_REQUEST_CANCELLED)", which k6 would report as a generic error (1000) where a body that
// stalls over h1 or h2 is a request timeout (1050).
func (b *doneBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		if ctxErr := b.ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w: %w", ctxErr, err)
		}
	}
	return n, err
}

func (b *doneBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
