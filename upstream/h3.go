package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// h3MaxStreams is how many concurrent request streams a client may open on
// one QUIC connection: 250, as net/http's HTTP/2 server allows and as every
// proxy is configured to, so that h2 and h3 offer the same concurrency
// (quic-go's default is 100, below the stress profile's 100 streams plus the
// client's own control streams).
const h3MaxStreams = 250

// h3Listener is the HTTP/3 side of the direct target: quic-go's http3.Server
// on a UDP socket, with the same handler as the TCP listeners.
type h3Listener struct {
	srv  *http3.Server
	conn *net.UDPConn
}

// listenH3 binds the UDP socket; serving starts with serve. tlsConf is the -tls one, restricted
// to TLS 1.3 (QUIC has no other); quic-go sets the ALPN (h3) itself. rcvBuf > 0 sets the
// socket's receive buffer, as every proxy's QUIC listener gets it; quic-go then keeps it when
// the kernel granted 7 MiB or more (it reports twice what was set), else raises it itself.
func listenH3(addr string, tlsConf *tls.Config, rcvBuf int, handler http.Handler, accepted *atomic.Int64) (*h3Listener, error) {
	udpAddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("-h3 %s: %w", addr, err)
	}
	conn, err := net.ListenUDP("udp", udpAddr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("-h3 %s (UDP) is already in use: stop whatever holds it or run `make down`: %w", addr, err)
	}
	if err != nil {
		return nil, fmt.Errorf("-h3 %s (UDP): %w", addr, err)
	}
	if rcvBuf > 0 {
		if err := conn.SetReadBuffer(rcvBuf); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("-udp-rcvbuf %d: %w", rcvBuf, err)
		}
	}
	tlsConf = tlsConf.Clone()
	tlsConf.MinVersion = tls.VersionTLS13
	srv := &http3.Server{
		TLSConfig:  tlsConf,
		QUICConfig: &quic.Config{MaxIncomingStreams: h3MaxStreams},
		Handler:    handler,
		// Counted once the handshake is complete (quic-go hands a connection
		// to the server only then), so a refused or failed handshake is not
		// in the count, unlike the TCP counters, which count at accept.
		ConnContext: func(ctx context.Context, _ *quic.Conn) context.Context {
			accepted.Add(1)
			return ctx
		},
		// No IdleTimeout, as on the TCP listeners; QUIC's own idle timeout
		// (30 s without a packet) still applies, and clients keep their
		// connections alive with PINGs.
	}
	return &h3Listener{srv: srv, conn: conn}, nil
}

func (l *h3Listener) addr() net.Addr { return l.conn.LocalAddr() }

func (l *h3Listener) serve() error { return l.srv.Serve(l.conn) }

// shutdown sends GOAWAY and waits, up to ctx, for in-flight requests.
func (l *h3Listener) shutdown(ctx context.Context) error {
	err := l.srv.Shutdown(ctx)
	// http3.Server.Serve leaves the socket it was given open.
	_ = l.conn.Close()
	return err
}

// close drops every connection at once.
func (l *h3Listener) close() {
	_ = l.srv.Close()
	_ = l.conn.Close()
}
