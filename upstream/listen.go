package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"syscall"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// instance is the upstream started: its listeners bound and served.
type instance struct {
	srv     *upstream.Server
	h1cAddr net.Addr
	tlsAddr net.Addr // nil without -tls
	h3Addr  net.Addr // nil without -h3
}

// start binds every listener before serving any, so that a port in use is
// reported, naming its flag, before anything answers.
func start(cfg config, logger *log.Logger) (*instance, error) {
	var tlsConf *tls.Config
	if cfg.tls != "" {
		cert, err := tls.LoadX509KeyPair(cfg.cert, cfg.key)
		if err != nil {
			return nil, fmt.Errorf("loading -cert %s and -key %s: %w", cfg.cert, cfg.key, err)
		}
		tlsConf = cfg.tlsConfig(cert)
	}

	var ls upstream.Listeners
	closeAll := func() {
		for _, c := range []interface{ Close() error }{ls.H1C, ls.TLS, ls.H3} {
			if c != nil {
				_ = c.Close()
			}
		}
	}
	h1c, err := listen("h1c", cfg.h1c)
	if err != nil {
		return nil, err
	}
	ls.H1C = h1c
	if cfg.tls != "" {
		tlsLn, err := listen("tls", cfg.tls)
		if err != nil {
			closeAll()
			return nil, err
		}
		ls.TLS = tlsLn
	}
	if cfg.h3 != "" {
		addr := cfg.h3
		if addr == cfg.tls {
			// the port the TLS listener got, when -tls asked for port 0
			addr = ls.TLS.Addr().String()
		}
		udp, err := listenUDP(addr, cfg.udpRcvBuf)
		if err != nil {
			closeAll()
			return nil, err
		}
		ls.H3 = udp
	}

	in := &instance{
		srv:     upstream.Serve(ls, upstream.Config{UploadLimit: cfg.uploadLimit, TLS: tlsConf, ErrorLog: logger}),
		h1cAddr: ls.H1C.Addr(),
	}
	logger.Printf("h1c listening on %s (HTTP/1.1)", in.h1cAddr)
	if ls.TLS != nil {
		in.tlsAddr = ls.TLS.Addr()
		logger.Printf("tls listening on %s (ALPN h2, http/1.1)", in.tlsAddr)
	}
	if ls.H3 != nil {
		in.h3Addr = ls.H3.LocalAddr()
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

func listen(flagName, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("-%s %s is already in use: stop whatever holds it or run `make down`: %w", flagName, addr, err)
	}
	if err != nil {
		return nil, fmt.Errorf("-%s %s: %w", flagName, addr, err)
	}
	return ln, nil
}

// listenUDP binds the -h3 socket. rcvBuf > 0 sets its receive buffer, as every proxy's QUIC
// listener gets it; quic-go then keeps it when the kernel granted 7 MiB or more (it reports
// twice what was set), else raises it itself.
func listenUDP(addr string, rcvBuf int) (*net.UDPConn, error) {
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
	return conn, nil
}
