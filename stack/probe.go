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

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
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
	H3  Protocol = "h3" // QUIC, on the TLS port number over UDP
)

// Protocols lists every protocol, in the order tables show them.
var Protocols = []Protocol{H1, H1C, H2, H3}

// ParseProtocol checks a protocol name from a target definition.
func ParseProtocol(name string) (Protocol, error) {
	for _, p := range Protocols {
		if string(p) == name {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown protocol %q: protocols are h1, h1c, h2, h3", name)
}

// Wire is the protocol a response must have arrived over.
func (p Protocol) Wire() string {
	switch p {
	case H2:
		return "HTTP/2.0"
	case H3:
		return "HTTP/3.0"
	}
	return "HTTP/1.1"
}

// Port is the target's port this protocol is served on: the cleartext one for h1c, the TLS one
// (TCP, or UDP for h3) for the others.
func (p Protocol) Port(ports Ports) int {
	if p == H1C {
		return ports.H1C
	}
	return ports.TLS
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
	target := net.JoinHostPort(p.addr, strconv.Itoa(port))
	var rt http.RoundTripper
	var scheme string
	switch proto {
	case H1, H1C, H2:
		tr := p.tcpTransport(proto, target)
		defer tr.CloseIdleConnections()
		rt, scheme = tr, "https"
		if proto == H1C {
			scheme = "http"
		}
	case H3:
		tr := p.quicTransport(target)
		// Close sends CONNECTION_CLOSE: the probe leaves no connection behind.
		defer tr.Close()
		rt, scheme = tr, "https"
	default:
		return fmt.Errorf("probe: unknown protocol %q", proto)
	}
	url := fmt.Sprintf("%s://%s:%d/", scheme, p.host, port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := (&http.Client{Transport: rt, Timeout: 5 * time.Second}).Do(req)
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

// tcpTransport speaks exactly proto (h1, h1c or h2) over one new TCP connection to target.
func (p *Prober) tcpTransport(proto Protocol, target string) *http.Transport {
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, target)
		},
		TLSClientConfig:   &tls.Config{ServerName: p.host, RootCAs: p.pool},
		DisableKeepAlives: true,
	}
	switch proto {
	case H2:
		tr.ForceAttemptHTTP2 = true
	case H1:
		// A non-nil empty map is how net/http is told not to offer h2.
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	return tr
}

// quicTransport speaks HTTP/3 over a new QUIC connection to target (UDP), verifying the
// certificate against our CA with the benchmark hostname as SNI, as k6/x/http3 does.
func (p *Prober) quicTransport(target string) *http3.Transport {
	return &http3.Transport{
		TLSClientConfig: &tls.Config{ServerName: p.host, RootCAs: p.pool, MinVersion: tls.VersionTLS13},
		// Nothing answers a QUIC Initial sent to a closed UDP port (no RST as in TCP): the
		// handshake would wait for quic-go's 5 s default; readiness polls instead.
		QUICConfig: &quic.Config{HandshakeIdleTimeout: 2 * time.Second},
		Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
			return quic.DialAddr(ctx, target, tlsCfg, cfg)
		},
	}
}
