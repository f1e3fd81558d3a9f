package main

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// TestTLSProfile: the flags the stack passes make both TLS listeners (TCP and QUIC) negotiate
// the one group asked for with a default Go client (which offers X25519MLKEM768 and X25519 key
// shares), TLS 1.3 only, and, without tickets, no second connection resumes; with Go's
// defaults the same client resumes, which is what the profile rules out.
func TestTLSProfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		set         func(*config)
		wantGroup   tls.CurveID
		wantResumed bool
	}{
		{"profile", func(c *config) {
			c.tlsMinVersion, c.tlsGroup, c.tlsTickets = "1.3", "X25519", false
		}, tls.X25519, false},
		{"another group", func(c *config) {
			c.tlsMinVersion, c.tlsGroup, c.tlsTickets = "1.3", "P-256", false
		}, tls.CurveP256, false},
		{"Go's defaults", func(c *config) { c.tlsMinVersion, c.tlsTickets = "1.2", true }, tls.X25519MLKEM768, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStackWith(t, tt.set)
			for _, p := range []string{"h1", "h3"} {
				cache := tls.NewLRUClientSessionCache(4)
				first := s.handshake(t, p, cache)
				second := s.handshake(t, p, cache)
				if first.Version != tls.VersionTLS13 || first.CurveID != tt.wantGroup {
					t.Errorf("%s: negotiated %s with %s, want TLS 1.3 with %s", p, tls.VersionName(first.Version), first.CurveID, tt.wantGroup)
				}
				if first.CipherSuite != tls.TLS_AES_128_GCM_SHA256 {
					t.Errorf("%s: cipher %s, want TLS_AES_128_GCM_SHA256 (Go's choice on AES hardware)", p, tls.CipherSuiteName(first.CipherSuite))
				}
				if second.DidResume != tt.wantResumed {
					t.Errorf("%s: second connection resumed: %v, want %v", p, second.DidResume, tt.wantResumed)
				}
			}
		})
	}
}

// handshake GETs /healthz over a new connection (h1 or h3) whose client offers Go's defaults
// and cache, and returns what was negotiated; the body is read, so a session ticket sent
// before it is in the cache.
func (s *stack) handshake(t *testing.T, p string, cache tls.ClientSessionCache) tls.ConnectionState {
	t.Helper()
	tc := &tls.Config{RootCAs: s.roots, ServerName: testHost, ClientSessionCache: cache}
	var rt http.RoundTripper
	if p == "h3" {
		tr := &http3.Transport{TLSClientConfig: tc, Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
			return quic.DialAddr(ctx, s.h3Addr, tlsCfg, cfg)
		}}
		defer func() {
			// quic-go takes a ticket sent after the response once the connection reads it
			time.Sleep(100 * time.Millisecond)
			_ = tr.Close()
		}()
		rt = tr
	} else {
		tr := &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.tlsAddr)
		}}
		defer tr.CloseIdleConnections()
		rt = tr
	}
	res, err := (&http.Client{Transport: rt, Timeout: 5 * time.Second}).Get(s.tlsURL + "/healthz")
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.TLS == nil {
		t.Fatalf("%s: no TLS state", p)
	}
	return *res.TLS
}

// TestUDPReceiveBuffer: -udp-rcvbuf sets the QUIC socket's receive buffer before quic-go sees
// it (the kernel reports twice what was set, capped by net.core.rmem_max).
func TestUDPReceiveBuffer(t *testing.T) {
	t.Parallel()
	const want = 1 << 20
	conn, err := listenUDP("127.0.0.1:0", want)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var serr error
	if err := raw.Control(func(fd uintptr) {
		got, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	limit := want
	if data, err := os.ReadFile("/proc/sys/net/core/rmem_max"); err == nil {
		if rmemMax, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && rmemMax < limit {
			limit = rmemMax
		}
	}
	if got != 2*limit {
		t.Errorf("SO_RCVBUF = %d, want %d (twice %d)", got, 2*limit, limit)
	}
}
