package stack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// RootBodyBytes is the size of the upstream's / body; a probe that gets another size fails.
const RootBodyBytes = 4096

// Protocol is one way of reaching a target, named as in the scenario matrix.
type Protocol string

// The protocols of the scenario matrix that the stack probes.
const (
	H1  Protocol = "h1"
	H1C Protocol = "h1c"
	H2  Protocol = "h2"
)

// Wire is the protocol a response must have arrived over.
func (p Protocol) Wire() string {
	if p == H2 {
		return "HTTP/2.0"
	}
	return "HTTP/1.1"
}

// Prober makes real, verified requests to targets: the TLS chain is checked against our CA,
// SNI and Host are the benchmark hostname, and the connection goes to loopback.
type Prober struct {
	host string
	addr string
	pool *x509.CertPool
}

// NewProber trusts only the CA in caFile.
func NewProber(host, addr, caFile string) (*Prober, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("probe: read CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("probe: %s holds no certificate", caFile)
	}
	return &Prober{host: host, addr: addr, pool: pool}, nil
}

// Probe GETs / over proto on port and checks status, exact body size and negotiated protocol.
func (p *Prober) Probe(ctx context.Context, proto Protocol, port int) error {
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	target := net.JoinHostPort(p.addr, strconv.Itoa(port))
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, target)
		},
		TLSClientConfig:   &tls.Config{ServerName: p.host, RootCAs: p.pool},
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	scheme := "https"
	switch proto {
	case H2:
		tr.ForceAttemptHTTP2 = true
	case H1:
		// A non-nil empty map is how net/http is told not to offer h2.
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
	case H1C:
		scheme = "http"
	default:
		return fmt.Errorf("probe: unknown protocol %q", proto)
	}
	url := fmt.Sprintf("%s://%s:%d/", scheme, p.host, port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", proto, url, err)
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read body: %w", proto, url, err)
	}
	switch {
	case res.StatusCode != http.StatusOK:
		return fmt.Errorf("%s %s: status %d, want 200", proto, url, res.StatusCode)
	case n != RootBodyBytes:
		return fmt.Errorf("%s %s: body %d bytes, want %d", proto, url, n, RootBodyBytes)
	case res.Proto != proto.Wire():
		return fmt.Errorf("%s %s: negotiated %s, want %s", proto, url, res.Proto, proto.Wire())
	}
	return nil
}
