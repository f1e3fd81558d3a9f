package upstream

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
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

// TestShutdownFinishesInFlight: a stop refuses new connections at once but
// lets a request under way run to its end.
func TestShutdownFinishesInFlight(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	c := s.client(t, protoH1C, true)
	resp, err := c.Get(s.url(protoH1C, "/sse?count=3&interval_ms=200"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if _, err := readEvent(r); err != nil {
		t.Fatal(err)
	}

	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- s.srv.Shutdown(ctx)
	}()

	// New connections are refused while the SSE stream is still running.
	deadline := time.Now().Add(2 * time.Second)
	for {
		conn, err := net.Dial("tcp", s.h1cAddr)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts 2s into the shutdown")
		}
		time.Sleep(5 * time.Millisecond)
	}

	for i := 1; i < 3; i++ {
		ev, err := readEvent(r)
		if err != nil || ev.Seq != i {
			t.Fatalf("event %d during shutdown: %+v, %v", i, ev, err)
		}
	}
	if _, err := readEvent(r); !errors.Is(err, io.EOF) {
		t.Errorf("after the last event: %v, want a clean end", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// TestShutdownH3: over HTTP/3 too, a stop lets a request under way run to its
// end, and new QUIC connections find nobody.
func TestShutdownH3(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	c := s.client(t, protoH3, true)
	resp, err := c.Get(s.url(protoH3, "/sse?count=3&interval_ms=200"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if _, err := readEvent(r); err != nil {
		t.Fatal(err)
	}

	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- s.srv.Shutdown(ctx)
	}()
	for i := 1; i < 3; i++ {
		ev, err := readEvent(r)
		if err != nil || ev.Seq != i {
			t.Fatalf("event %d during shutdown: %+v, %v", i, ev, err)
		}
	}
	if _, err := readEvent(r); !errors.Is(err, io.EOF) {
		t.Errorf("after the last event: %v, want a clean end", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url(protoH3, "/healthz"), nil)
	if resp, err := s.client(t, protoH3, false).Do(req); err == nil {
		resp.Body.Close()
		t.Error("a new QUIC connection was answered after shutdown")
	}
}
