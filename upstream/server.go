package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/gorilla/websocket"
)

// server is the handler shared by every listener (h1c, tls, h3). What it serves is built
// once, at start, so that requests only copy bytes.
type server struct {
	uploadLimit int64
	conns       connCounters
	served      servedCounters
	// streamChunk backs every /stream chunk: a prefix of it is the chunk.
	streamChunk []byte
	ws          wsRegistry
	upgrader    websocket.Upgrader
}

func newServer(uploadLimit int64) *server {
	s := &server{
		uploadLimit: uploadLimit,
		streamChunk: pattern(streamParams[1].max),
		ws:          wsRegistry{conns: make(map[*websocket.Conn]struct{})},
	}
	s.upgrader = newUpgrader(s)
	return s
}

// instance is a started server: its listeners are bound and being served.
type instance struct {
	srv     *server
	http    *http.Server
	h3      *h3Listener // nil without -h3
	h1cAddr net.Addr
	tlsAddr net.Addr // nil without -tls
	h3Addr  net.Addr // nil without -h3
	// errc receives the error of a listener that stopped serving for a
	// reason other than a shutdown.
	errc chan error
}

// start binds every listener before serving any, so that a port in use is
// reported before anything answers.
func start(cfg config, logger *log.Logger) (*instance, error) {
	s := newServer(cfg.uploadLimit)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	// HTTP/2 only ever applies to the TLS listener: cleartext stays HTTP/1.1
	// (no h2c), the protocol every proxy uses towards the upstream.
	protocols.SetHTTP2(true)
	headerTimeout := cfg.readHeaderTimeout
	if headerTimeout <= 0 {
		headerTimeout = readHeaderTimeout
	}
	hs := &http.Server{
		Handler:           s,
		Protocols:         &protocols,
		ReadHeaderTimeout: headerTimeout,
		// No IdleTimeout: the proxies own their keep-alive pools; an upstream
		// closing idle connections would race their reuse and show up as
		// proxy errors that are not the proxy's fault.
		ErrorLog: logger,
	}
	hs.RegisterOnShutdown(s.ws.goingAway)

	var cert tls.Certificate
	if cfg.tls != "" {
		var err error
		cert, err = tls.LoadX509KeyPair(cfg.cert, cfg.key)
		if err != nil {
			return nil, fmt.Errorf("loading -cert %s and -key %s: %w", cfg.cert, cfg.key, err)
		}
		hs.TLSConfig = cfg.tlsConfig(cert)
		hs.TLSConfig.NextProtos = []string{"h2", "http/1.1"}
	}

	h1cLn, err := listen("h1c", cfg.h1c, &s.conns.h1c)
	if err != nil {
		return nil, err
	}
	var tlsLn net.Listener
	if cfg.tls != "" {
		tlsLn, err = listen("tls", cfg.tls, &s.conns.tls)
		if err != nil {
			_ = h1cLn.Close()
			return nil, err
		}
	}

	var h3 *h3Listener
	if cfg.h3 != "" {
		addr := cfg.h3
		if addr == cfg.tls {
			// the port the TLS listener got, when -tls asked for port 0
			addr = tlsLn.Addr().String()
		}
		h3, err = listenH3(addr, cfg.tlsConfig(cert), cfg.udpRcvBuf, s, &s.conns.h3)
		if err != nil {
			_ = h1cLn.Close()
			_ = tlsLn.Close()
			return nil, err
		}
	}

	in := &instance{srv: s, http: hs, h3: h3, h1cAddr: h1cLn.Addr(), errc: make(chan error, 3)}
	go in.serve("h1c", cfg.h1c, func() error { return hs.Serve(h1cLn) })
	logger.Printf("h1c listening on %s (HTTP/1.1)", in.h1cAddr)
	if tlsLn != nil {
		in.tlsAddr = tlsLn.Addr()
		go in.serve("tls", cfg.tls, func() error { return hs.ServeTLS(tlsLn, "", "") })
		logger.Printf("tls listening on %s (ALPN h2, http/1.1)", in.tlsAddr)
	}
	if h3 != nil {
		in.h3Addr = h3.addr()
		go in.serve("h3", cfg.h3, h3.serve)
		logger.Printf("h3 listening on %s (UDP, QUIC, ALPN h3)", in.h3Addr)
	}
	return in, nil
}

// tlsConfig is the TLS of the -tls and -h3 listeners: the direct target's TLS profile, as the
// stack passes it (-tls-min-version, -tls-group, -tls-tickets). The TLS 1.3 cipher is not
// among them: Go's server chooses it itself (AES-128-GCM when both ends have AES hardware).
func (c config) tlsConfig(cert tls.Certificate) *tls.Config {
	tc := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tlsVersions[c.tlsMinVersion],
		// Go's server has no session cache: without tickets nothing resumes
		SessionTicketsDisabled: !c.tlsTickets,
	}
	if id, ok := tlsGroups[c.tlsGroup]; ok {
		tc.CurvePreferences = []tls.CurveID{id}
	}
	return tc
}

func (in *instance) serve(flagName, addr string, serve func() error) {
	if err := serve(); !errors.Is(err, http.ErrServerClosed) {
		in.errc <- fmt.Errorf("serving -%s %s: %w", flagName, addr, err)
	}
}

// shutdown closes the listeners and waits, up to ctx, for in-flight requests;
// WebSockets are told the server is going away.
func (in *instance) shutdown(ctx context.Context) error {
	h3done := make(chan error, 1)
	go func() {
		if in.h3 == nil {
			h3done <- nil
			return
		}
		h3done <- in.h3.shutdown(ctx)
	}()
	err := in.http.Shutdown(ctx)
	return errors.Join(err, <-h3done)
}

// close drops every connection, WebSockets included.
func (in *instance) close() {
	_ = in.http.Close()
	if in.h3 != nil {
		in.h3.close()
	}
	in.srv.ws.closeAll()
}
