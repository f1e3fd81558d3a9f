package stack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
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
	_, err := p.get(ctx, proto, port, nil)
	return err
}

// Negotiated is what one TLS protocol (h1, h2 over TCP; h3 over QUIC) of a target negotiated
// with a client offering what a default Go client (k6) offers.
type Negotiated struct {
	Version string `json:"version"` // "1.3"
	Group   string `json:"group"`   // key exchange, as the profile spells it: X25519
	Cipher  string `json:"cipher"`  // TLS_AES_128_GCM_SHA256
	// Resumption: a second connection resumed the first one's session (ticket or cache).
	Resumption bool `json:"resumption"`
	// Listed are the parameters that differ from the profile as the target's definition lists
	// them (Definition.TLSDifferences), each with why.
	Listed map[string]string `json:"listed_differences,omitempty"`
}

func (n Negotiated) String() string {
	s := fmt.Sprintf("TLS %s %s %s, %s", n.Version, n.Group, n.Cipher, resumptionWord(n.Resumption))
	if len(n.Listed) > 0 {
		s += " (listed difference: " + strings.Join(slices.Sorted(maps.Keys(n.Listed)), ", ") + ")"
	}
	return s
}

// versionName is a TLS version as profiles write it: "1.3".
func versionName(v uint16) string {
	return strings.TrimPrefix(tls.VersionName(v), "TLS ")
}

// CheckTLS verifies that a target negotiates the TLS profile over proto (h1, h2 or h3; h1c
// has nothing to check: nil, nil): two verified GETs on two new connections, both offering a
// session cache. The first must negotiate the profile's version, group and cipher, the second
// must not resume. The client offers Go's defaults (X25519MLKEM768 and X25519 key shares, Go's
// cipher list), so that what is checked is the server's choice, as k6 meets it. It returns
// what was negotiated, also when that is not the profile.
//
// listed are the parameters (group, cipher, resumption) the target's definition says it cannot
// make match, with why (Definition.TLSDifferences): a difference there is recorded in
// Negotiated.Listed, not refused.
func (p *Prober) CheckTLS(ctx context.Context, proto Protocol, port int, profile string, want TLSProfile, listed map[string]string) (*Negotiated, error) {
	if proto == H1C {
		return nil, nil
	}
	cache := &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(4), stored: make(chan struct{}, 1), wait: true}
	first, err := p.get(ctx, proto, port, cache)
	if err != nil {
		return nil, err
	}
	cache.wait = false // the second connection's tickets are never used
	second, err := p.get(ctx, proto, port, cache)
	if err != nil {
		return nil, fmt.Errorf("second connection: %w", err)
	}
	got := &Negotiated{
		Version:    versionName(first.Version),
		Group:      GroupName(first.CurveID),
		Cipher:     tls.CipherSuiteName(first.CipherSuite),
		Resumption: second.DidResume,
	}
	var bad []string
	differs := func(param, why string) {
		if reason := listed[param]; reason != "" {
			if got.Listed == nil {
				got.Listed = map[string]string{}
			}
			got.Listed[param] = reason
			return
		}
		bad = append(bad, why)
	}
	for _, c := range []struct{ what, got, want string }{
		{"version", got.Version, want.Version},
		{"group", got.Group, want.Group},
		{"cipher", got.Cipher, want.Cipher},
	} {
		if c.got != c.want {
			differs(c.what, fmt.Sprintf("TLS %s %s negotiated, the profile wants %s", c.what, c.got, c.want))
		}
	}
	switch {
	case got.Resumption && !want.Resumption:
		differs("resumption", "TLS resumption: a second connection resumed the first one's session, the profile wants none")
	case !got.Resumption && want.Resumption:
		differs("resumption", "TLS resumption: a second connection did not resume the first one's session, the profile wants it to")
	}
	if len(bad) > 0 {
		return got, fmt.Errorf("%s: %s (TLS profile %q)", proto, strings.Join(bad, "; "), profile)
	}
	return got, nil
}

// ticketCache is a client session cache that tells when a server's session ticket arrived.
type ticketCache struct {
	tls.ClientSessionCache
	stored chan struct{}
	wait   bool // an h3 connection waits up to ticketWait for a ticket before it closes
}

func (c *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	select {
	case c.stored <- struct{}{}:
	default:
	}
}

// ticketWait bounds how long an h3 probe keeps its connection open for a session ticket that
// did not come before the response: a QUIC server may send it in a later packet.
const ticketWait = 300 * time.Millisecond

// get GETs / over proto on port, checks the answer as Probe says, and returns the TLS state of
// the connection (nil for h1c). cache, when not nil, is offered for session resumption.
func (p *Prober) get(ctx context.Context, proto Protocol, port int, cache *ticketCache) (*tls.ConnectionState, error) {
	target := net.JoinHostPort(p.addr, strconv.Itoa(port))
	var rt http.RoundTripper
	var scheme string
	var sessions tls.ClientSessionCache
	if cache != nil {
		sessions = cache
	}
	switch proto {
	case H1, H1C, H2:
		tr := p.tcpTransport(proto, target, sessions)
		defer tr.CloseIdleConnections()
		rt, scheme = tr, "https"
		if proto == H1C {
			scheme = "http"
		}
	case H3:
		tr := p.quicTransport(target, sessions)
		// Close sends CONNECTION_CLOSE: the probe leaves no connection behind.
		defer tr.Close()
		rt, scheme = tr, "https"
	default:
		return nil, fmt.Errorf("probe: unknown protocol %q", proto)
	}
	url := fmt.Sprintf("%s://%s:%d/", scheme, p.host, port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := (&http.Client{Transport: rt, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", proto, url, err)
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", proto, url, err)
	}
	switch {
	case res.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s %s: status %d, want 200", proto, url, res.StatusCode)
	case n != RootBodyBytes:
		return nil, fmt.Errorf("%s %s: body %d bytes, want %d", proto, url, n, RootBodyBytes)
	case res.Proto != proto.Wire():
		return nil, fmt.Errorf("%s %s: negotiated %s, want %s", proto, url, res.Proto, proto.Wire())
	case proto != H1C && res.TLS == nil:
		return nil, fmt.Errorf("%s %s: answered without TLS", proto, url)
	}
	if proto == H3 && cache != nil && cache.wait {
		// Over TCP a ticket precedes the response in the stream; over QUIC it may come after
		// it, and is only taken while the connection is open.
		select {
		case <-cache.stored:
		case <-time.After(ticketWait):
		case <-ctx.Done():
		}
	}
	return res.TLS, nil
}

// tcpTransport speaks exactly proto (h1, h1c or h2) over one new TCP connection to target.
func (p *Prober) tcpTransport(proto Protocol, target string, sessions tls.ClientSessionCache) *http.Transport {
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, target)
		},
		// Go's defaults otherwise: the groups, key shares and ciphers k6 offers
		TLSClientConfig:   &tls.Config{ServerName: p.host, RootCAs: p.pool, ClientSessionCache: sessions},
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
// certificate against our CA with the benchmark hostname as SNI, as k6/x/proxybench/http3 does.
func (p *Prober) quicTransport(target string, sessions tls.ClientSessionCache) *http3.Transport {
	return &http3.Transport{
		TLSClientConfig: &tls.Config{ServerName: p.host, RootCAs: p.pool, MinVersion: tls.VersionTLS13, ClientSessionCache: sessions},
		// Nothing answers a QUIC Initial sent to a closed UDP port (no RST as in TCP): the
		// handshake would wait for quic-go's 5 s default; readiness polls instead.
		QUICConfig: &quic.Config{HandshakeIdleTimeout: 2 * time.Second},
		Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
			return quic.DialAddr(ctx, target, tlsCfg, cfg)
		},
	}
}
