package main

import (
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// TestALPN checks the direct target negotiates h2 and http/1.1 by ALPN,
// preferring h2, and that the handshake verifies against the CA for
// bench.test.
func TestALPN(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	tests := []struct {
		name   string
		offer  []string
		want   string
		wantOK bool
	}{
		{"h2 only", []string{"h2"}, "h2", true},
		{"http/1.1 only", []string{"http/1.1"}, "http/1.1", true},
		{"both, h2 preferred", []string{"http/1.1", "h2"}, "h2", true},
		{"no ALPN", nil, "", true},
		{"unknown only", []string{"h3"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := &tls.Dialer{
				NetDialer: &net.Dialer{Timeout: 5 * time.Second},
				Config:    &tls.Config{RootCAs: s.roots, ServerName: testHost, NextProtos: tt.offer},
			}
			conn, err := d.Dial("tcp", s.tlsAddr)
			if !tt.wantOK {
				if err == nil {
					conn.Close()
					t.Fatal("handshake succeeded, want no_application_protocol")
				}
				return
			}
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			defer conn.Close()
			if got := conn.(*tls.Conn).ConnectionState().NegotiatedProtocol; got != tt.want {
				t.Errorf("negotiated %q, want %q", got, tt.want)
			}
		})
	}
}

// TestProtoPerClient: the same request over each client flavour comes back
// over the protocol that client asked for.
func TestProtoPerClient(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	for _, p := range allProtos {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			resp, _ := get(t, s.client(t, p, true), s.url(p, "/healthz"))
			if resp.Proto != p.wantProto() {
				t.Errorf("proto = %s, want %s", resp.Proto, p.wantProto())
			}
			wantALPN := map[proto]string{protoH1: "http/1.1", protoH2: "h2", protoH3: "h3"}[p]
			if p == protoH1C {
				if resp.TLS != nil {
					t.Error("cleartext listener answered over TLS")
				}
			} else if resp.TLS == nil || resp.TLS.NegotiatedProtocol != wantALPN {
				t.Errorf("ALPN = %v, want %q", resp.TLS, wantALPN)
			}
		})
	}
}
