package upstream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// DefaultUploadLimit is the upstream's largest /upload body and WebSocket message, bytes.
const DefaultUploadLimit = 8 << 20

// ReadHeaderTimeout bounds how long a connection may take to send a request's
// headers (and, on the TLS listener, its TLS handshake), counted from its first byte or,
// on a new connection, from accept: a client that trickles them or never
// finishes (slowloris) is disconnected, without an answer, rather than holding a
// connection and a goroutine for ever. It cannot cut a long /sse or /stream,
// a slow /upload body or a WebSocket: it ends once the headers are read, and
// the body, the response and a hijacked connection have no deadline at all
// (no ReadTimeout or WriteTimeout, which would). Nor does it close idle
// keep-alive connections: net/http uses it for those only through
// IdleTimeout and ReadTimeout, both unset (see Serve). 10 s is far above any
// bench client's header time on loopback.
const ReadHeaderTimeout = 10 * time.Second

// h3MaxStreams is how many concurrent request streams a client may open on
// one QUIC connection: 250, as net/http's HTTP/2 server allows and as every
// proxy is configured to, so that h2 and h3 offer the same concurrency
// (quic-go's default is 100, below the stress profile's 100 streams plus the
// client's own control streams).
const h3MaxStreams = 250

// Listeners are the sockets Serve serves, bound by the caller (the upstream's main names its
// flags in a bind's errors); Serve owns them from then on. A nil one is not served.
type Listeners struct {
	H1C net.Listener   // cleartext HTTP/1.1, keep-alive, no h2c
	TLS net.Listener   // HTTP/2 and HTTP/1.1 by ALPN (h2, http/1.1)
	H3  net.PacketConn // HTTP/3 over QUIC
}

// Config is what Serve needs beyond the sockets.
type Config struct {
	UploadLimit int64 // largest /upload body, bytes
	// TLS holds the certificate and the TLS profile of the TLS and H3 listeners (required
	// with either); Serve adds the ALPN, and holds H3 to TLS 1.3 (QUIC has no other).
	TLS *tls.Config
	// ReadHeaderTimeout replaces the package's when > 0: tests set less, to see a slow client
	// cut without waiting 10 s.
	ReadHeaderTimeout time.Duration
	ErrorLog          *log.Logger // net/http's; nil: the log package's standard logger
}

// Server is the upstream serving its listeners.
type Server struct {
	handler *Handler
	http    *http.Server
	h3      *http3.Server // nil without an H3 listener
	h3conn  net.PacketConn
	errc    chan error
}

// Serve serves the routes on every listener of ls until Shutdown or Close. HTTP/3 serves every
// route with the same handler; /ws stays HTTP/1.1 (a WebSocket over h2 or h3 needs extended
// CONNECT, which no client of the suite speaks).
func Serve(ls Listeners, cfg Config) *Server {
	h := NewHandler(cfg.UploadLimit)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	// HTTP/2 only ever applies to the TLS listener: cleartext stays HTTP/1.1
	// (no h2c), the protocol every proxy uses towards the upstream.
	protocols.SetHTTP2(true)
	headerTimeout := cfg.ReadHeaderTimeout
	if headerTimeout <= 0 {
		headerTimeout = ReadHeaderTimeout
	}
	s := &Server{
		handler: h,
		http: &http.Server{
			Handler:           h,
			Protocols:         &protocols,
			ReadHeaderTimeout: headerTimeout,
			// No IdleTimeout: the proxies own their keep-alive pools; an upstream
			// closing idle connections would race their reuse and show up as
			// proxy errors that are not the proxy's fault.
			ErrorLog: cfg.ErrorLog,
		},
		errc: make(chan error, 3),
	}
	s.http.RegisterOnShutdown(h.ws.goingAway)
	if ls.TLS != nil {
		s.http.TLSConfig = cfg.TLS.Clone()
		s.http.TLSConfig.NextProtos = []string{"h2", "http/1.1"}
	}
	if ls.H3 != nil {
		s.h3, s.h3conn = newH3Server(cfg.TLS, h), ls.H3
	}

	// every server is set up before any serves: serving reads its settings
	if ls.H1C != nil {
		ln := countingListener{Listener: ls.H1C, accepted: &h.conns.h1c}
		go s.serve("h1c", ln.Addr(), func() error { return s.http.Serve(ln) })
	}
	if ls.TLS != nil {
		ln := countingListener{Listener: ls.TLS, accepted: &h.conns.tls}
		go s.serve("tls", ln.Addr(), func() error { return s.http.ServeTLS(ln, "", "") })
	}
	if s.h3 != nil {
		go s.serve("h3", ls.H3.LocalAddr(), func() error { return s.h3.Serve(ls.H3) })
	}
	return s
}

// newH3Server is quic-go's http3.Server for h, on tlsConf restricted to TLS 1.3; quic-go sets
// the ALPN (h3) itself.
func newH3Server(tlsConf *tls.Config, h *Handler) *http3.Server {
	tlsConf = tlsConf.Clone()
	tlsConf.MinVersion = tls.VersionTLS13
	return &http3.Server{
		TLSConfig:  tlsConf,
		QUICConfig: &quic.Config{MaxIncomingStreams: h3MaxStreams},
		Handler:    h,
		// Counted once the handshake is complete (quic-go hands a connection
		// to the server only then), so a refused or failed handshake is not
		// in the count, unlike the TCP counters, which count at accept.
		ConnContext: func(ctx context.Context, _ *quic.Conn) context.Context {
			h.conns.h3.Add(1)
			return ctx
		},
		// No IdleTimeout, as on the TCP listeners; QUIC's own idle timeout
		// (30 s without a packet) still applies, and clients keep their
		// connections alive with PINGs.
	}
}

func (s *Server) serve(listener string, addr net.Addr, serve func() error) {
	if err := serve(); !errors.Is(err, http.ErrServerClosed) {
		s.errc <- fmt.Errorf("serving %s on %s: %w", listener, addr, err)
	}
}

// Err receives the error of a listener that stopped serving for a reason other than a
// shutdown.
func (s *Server) Err() <-chan error { return s.errc }

// Shutdown closes the listeners and waits, up to ctx, for in-flight requests;
// WebSockets are told the server is going away, HTTP/3 clients get a GOAWAY.
func (s *Server) Shutdown(ctx context.Context) error {
	h3done := make(chan error, 1)
	go func() {
		if s.h3 == nil {
			h3done <- nil
			return
		}
		err := s.h3.Shutdown(ctx)
		// http3.Server.Serve leaves the socket it was given open.
		_ = s.h3conn.Close()
		h3done <- err
	}()
	err := s.http.Shutdown(ctx)
	return errors.Join(err, <-h3done)
}

// Close drops every connection at once, WebSockets included.
func (s *Server) Close() {
	_ = s.http.Close()
	if s.h3 != nil {
		_ = s.h3.Close()
		_ = s.h3conn.Close()
	}
	s.handler.ws.closeAll()
}
