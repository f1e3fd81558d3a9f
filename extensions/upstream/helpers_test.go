package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/proxybench/proxybench/extensions/localca"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// testUploadLimit keeps over-limit bodies small in tests.
const testUploadLimit = 64 << 10

const testHost = "bench.test"

// testCA is the throwaway CA of every test stack and its bench.test leaf, made once for all.
var testCA = sync.OnceValues(func() (*localca.Authority, error) {
	return localca.New("upstream test CA", []string{testHost, "127.0.0.1"}, time.Hour, time.Hour)
})

// stack is Serve on 127.0.0.1:0, every listener: h3 on the TLS port over
// UDP, as the stack runs the upstream.
type stack struct {
	srv     *Server
	h1cAddr string
	h1cURL  string // http://127.0.0.1:port
	tlsURL  string // https://bench.test:port, dialled at 127.0.0.1 (TCP, and UDP for h3)
	tlsAddr string
	h3Addr  string
	roots   *x509.CertPool
}

func newStack(t *testing.T) *stack { return newStackWith(t, nil) }

// newStackWith starts a stack whose Config set changes first (nil: none).
func newStackWith(t *testing.T, set func(*Config)) *stack {
	t.Helper()
	ca, err := testCA()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		UploadLimit: testUploadLimit,
		TLS:         &tls.Config{Certificates: []tls.Certificate{ca.Leaf()}},
		ErrorLog:    log.New(io.Discard, "", 0),
	}
	if set != nil {
		set(&cfg)
	}
	h1c, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenPacket("udp", tlsLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := Serve(Listeners{H1C: h1c, TLS: tlsLn, H3: udp}, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		srv.Close()
	})
	_, port, _ := net.SplitHostPort(tlsLn.Addr().String())
	return &stack{
		srv:     srv,
		h1cAddr: h1c.Addr().String(),
		h1cURL:  "http://" + h1c.Addr().String(),
		tlsURL:  "https://" + net.JoinHostPort(testHost, port),
		tlsAddr: tlsLn.Addr().String(),
		h3Addr:  udp.LocalAddr().String(),
		roots:   ca.Pool(),
	}
}

// proto names a client flavour: how it reaches the stack.
type proto string

const (
	protoH1C proto = "h1c" // cleartext HTTP/1.1
	protoH1  proto = "h1"  // TLS, ALPN http/1.1 only
	protoH2  proto = "h2"  // TLS, ALPN h2 only
	protoH3  proto = "h3"  // QUIC (quic-go's client)
)

var allProtos = []proto{protoH1C, protoH1, protoH2, protoH3}

func (p proto) wantProto() string {
	switch p {
	case protoH2:
		return "HTTP/2.0"
	case protoH3:
		return "HTTP/3.0"
	}
	return "HTTP/1.1"
}

// url returns the stack's URL for path over p.
func (s *stack) url(p proto, path string) string {
	if p == protoH1C {
		return s.h1cURL + path
	}
	return s.tlsURL + path
}

// client returns a client speaking p only; keepAlive false opens a
// connection per request.
func (s *stack) client(t *testing.T, p proto, keepAlive bool) *http.Client {
	t.Helper()
	if p == protoH3 {
		return s.h3Client(t, keepAlive)
	}
	var protocols http.Protocols
	tlsConfig := &tls.Config{RootCAs: s.roots, ServerName: testHost}
	switch p {
	case protoH1C:
		protocols.SetHTTP1(true)
	case protoH1:
		protocols.SetHTTP1(true)
		// Go's HTTP/1-only transport offers no ALPN; ask for http/1.1 as
		// other clients do, so the test sees it negotiated.
		tlsConfig.NextProtos = []string{"http/1.1"}
	case protoH2:
		protocols.SetHTTP2(true)
	}
	tlsAddr := s.tlsAddr
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		Protocols:         &protocols,
		TLSClientConfig:   tlsConfig,
		DisableKeepAlives: !keepAlive,
		// Makes Expect: 100-continue wait for the server's verdict.
		ExpectContinueTimeout: 5 * time.Second,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, _, _ := net.SplitHostPort(addr); host == testHost {
				addr = tlsAddr
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// get fetches url and returns the response with its body read.
func get(t *testing.T, c *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp, body
}

// h3Client is quic-go's HTTP/3 client, verifying bench.test against the test
// CA and dialling the upstream's UDP address; keepAlive false opens a QUIC
// connection per request.
func (s *stack) h3Client(t *testing.T, keepAlive bool) *http.Client {
	t.Helper()
	newTransport := func() *http3.Transport {
		return &http3.Transport{
			TLSClientConfig: &tls.Config{RootCAs: s.roots, ServerName: testHost},
			Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
				return quic.DialAddr(ctx, s.h3Addr, tlsCfg, cfg)
			},
		}
	}
	var rt http.RoundTripper
	if keepAlive {
		tr := newTransport()
		t.Cleanup(func() { _ = tr.Close() })
		rt = tr
	} else {
		rt = freshH3(newTransport)
	}
	return &http.Client{Transport: rt, Timeout: 10 * time.Second}
}

// freshH3 sends every request on a transport, so a QUIC connection, of its
// own, closed once the response body is closed.
type freshH3 func() *http3.Transport

func (f freshH3) RoundTrip(req *http.Request) (*http.Response, error) {
	tr := f()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		_ = tr.Close()
		return nil, err
	}
	resp.Body = closeAfter{ReadCloser: resp.Body, tr: tr}
	return resp, nil
}

type closeAfter struct {
	io.ReadCloser
	tr *http3.Transport
}

func (c closeAfter) Close() error {
	err := c.ReadCloser.Close()
	_ = c.tr.Close()
	return err
}
