package stack

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// probeServer is a target as the stack sees one: TLS (h1, h2) on a TCP port, h3 on the same port
// number over UDP, cleartext h1 on another, all serving handler with the stack's own certificate.
type probeServer struct {
	tlsPort, h1cPort int
}

func startProbeServer(t *testing.T, certs Certs, handler http.Handler, withH3 bool) probeServer {
	t.Helper()
	return startTLSServer(t, certs, handler, withH3, nil)
}

// startTLSServer is startProbeServer whose TLS configuration (TCP and QUIC alike) set changes
// first (nil: Go's defaults).
func startTLSServer(t *testing.T, certs Certs, handler http.Handler, withH3 bool, set func(*tls.Config)) probeServer {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	tlsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h1cLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}}
	if set != nil {
		set(tlsConf)
	}
	hsTLS := tlsConf.Clone()
	hsTLS.NextProtos = []string{"h2", "http/1.1"}
	hs := &http.Server{Handler: handler, Protocols: &protocols, TLSConfig: hsTLS}
	go func() { _ = hs.ServeTLS(tlsLn, "", "") }()
	go func() { _ = hs.Serve(h1cLn) }()
	t.Cleanup(func() { _ = hs.Close() })
	ps := probeServer{tlsPort: tlsLn.Addr().(*net.TCPAddr).Port, h1cPort: h1cLn.Addr().(*net.TCPAddr).Port}
	if withH3 {
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: ps.tlsPort})
		if err != nil {
			t.Fatal(err)
		}
		h3 := &http3.Server{Handler: handler, TLSConfig: tlsConf.Clone()}
		go func() { _ = h3.Serve(udp) }()
		t.Cleanup(func() {
			_ = h3.Close()
			_ = udp.Close()
		})
	}
	return ps
}

func rootHandler(size int) http.Handler {
	body := bytes.Repeat([]byte("x"), size)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
}

func TestProbe(t *testing.T) {
	t.Parallel()
	certs, prober := testProber(t)
	good := startProbeServer(t, certs, rootHandler(RootBodyBytes), true)
	short := startProbeServer(t, certs, rootHandler(100), true)
	noH3 := startProbeServer(t, certs, rootHandler(RootBodyBytes), false)

	otherCerts, err := EnsureCerts(t.TempDir(), "bench.test")
	if err != nil {
		t.Fatal(err)
	}
	untrusted := startProbeServer(t, otherCerts, rootHandler(RootBodyBytes), true)

	tests := []struct {
		name    string
		srv     probeServer
		proto   Protocol
		wantErr string // "" for a healthy probe
	}{
		{"h1", good, H1, ""},
		{"h1c", good, H1C, ""},
		{"h2", good, H2, ""},
		{"h3", good, H3, ""},
		{"h3 short body", short, H3, "body 100 bytes, want 4096"},
		{"h2 short body", short, H2, "body 100 bytes, want 4096"},
		{"h3 nothing on the UDP port", noH3, H3, "h3 https://bench.test:"},
		{"h3 untrusted certificate", untrusted, H3, "certificate"},
		{"unknown", good, Protocol("h4"), `unknown protocol "h4"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			err := prober.Probe(ctx, tc.proto, tc.proto.Port(Ports{TLS: tc.srv.tlsPort, H1C: tc.srv.h1cPort}))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("probe: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("probe error %v, want it to contain %q", err, tc.wantErr)
			}
			// A silent UDP port must fail within the probe's own handshake timeout, so that
			// readiness keeps polling instead of hanging on one attempt.
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("failing probe took %v", d)
			}
		})
	}
}

// TestCheckTLS: a target is checked against the TLS profile over TCP (h1, h2) and QUIC (h3)
// alike, with a client offering Go's defaults, so the server's choice decides. A server that
// picks another group fails naming the group, what it negotiated and what the profile wants;
// one that issues session tickets fails the resumption check; one that matches passes and
// says what it negotiated.
func TestCheckTLS(t *testing.T) {
	t.Parallel()
	certs, prober := testProber(t)
	body := rootHandler(RootBodyBytes)
	profile := TLSProfile{Version: "1.3", Group: "X25519", Cipher: "TLS_AES_128_GCM_SHA256"}
	pq := profile
	pq.Group = "X25519MLKEM768"
	matching := startTLSServer(t, certs, body, true, func(c *tls.Config) {
		c.MinVersion, c.CurvePreferences, c.SessionTicketsDisabled = tls.VersionTLS13, []tls.CurveID{tls.X25519}, true
	})
	p256 := startTLSServer(t, certs, body, true, func(c *tls.Config) {
		c.CurvePreferences, c.SessionTicketsDisabled = []tls.CurveID{tls.CurveP256}, true
	})
	tickets := startTLSServer(t, certs, body, true, func(c *tls.Config) {
		c.CurvePreferences = []tls.CurveID{tls.X25519}
	})
	goDefaults := startTLSServer(t, certs, body, true, func(c *tls.Config) { c.SessionTicketsDisabled = true })

	want := Negotiated{Version: "1.3", Group: "X25519", Cipher: "TLS_AES_128_GCM_SHA256"}
	tests := []struct {
		name    string
		srv     probeServer
		want    TLSProfile
		got     Negotiated
		listed  map[string]string // the definition's listed differences (Definition.TLSDifferences)
		wantErr string            // "" when the profile is met
	}{
		{"matching", matching, profile, want, nil, ""},
		{
			"session tickets, a listed difference", tickets, profile,
			Negotiated{Version: "1.3", Group: "X25519", Cipher: "TLS_AES_128_GCM_SHA256", Resumption: true, Listed: map[string]string{"resumption": "no setting"}},
			map[string]string{"resumption": "no setting"},
			"",
		},
		{
			"a listed difference that does not excuse another group", p256, profile,
			Negotiated{Version: "1.3", Group: "P-256", Cipher: "TLS_AES_128_GCM_SHA256"},
			map[string]string{"resumption": "no setting"},
			`TLS group P-256 negotiated`,
		},
		{
			"another group", p256, profile,
			Negotiated{Version: "1.3", Group: "P-256", Cipher: "TLS_AES_128_GCM_SHA256"},
			nil, `TLS group P-256 negotiated, the profile wants X25519 (TLS profile "test")`,
		},
		{
			"session tickets", tickets, profile,
			Negotiated{Version: "1.3", Group: "X25519", Cipher: "TLS_AES_128_GCM_SHA256", Resumption: true},
			nil, `TLS resumption: a second connection resumed the first one's session, the profile wants none (TLS profile "test")`,
		},
		{"the hybrid a default Go server picks", goDefaults, pq, Negotiated{Version: "1.3", Group: "X25519MLKEM768", Cipher: "TLS_AES_128_GCM_SHA256"}, nil, ""},
		{
			"the hybrid where the profile wants X25519", goDefaults, profile,
			Negotiated{Version: "1.3", Group: "X25519MLKEM768", Cipher: "TLS_AES_128_GCM_SHA256"},
			nil, `TLS group X25519MLKEM768 negotiated, the profile wants X25519`,
		},
		{
			"another cipher", matching,
			TLSProfile{Version: "1.3", Group: "X25519", Cipher: "TLS_AES_256_GCM_SHA384"},
			want,
			nil, `TLS cipher TLS_AES_128_GCM_SHA256 negotiated, the profile wants TLS_AES_256_GCM_SHA384`,
		},
	}
	for _, tc := range tests {
		for _, proto := range []Protocol{H1, H2, H3} {
			t.Run(tc.name+"/"+string(proto), func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				got, err := prober.CheckTLS(ctx, proto, tc.srv.tlsPort, "test", tc.want, tc.listed)
				if got == nil || !reflect.DeepEqual(*got, tc.got) {
					t.Errorf("negotiated %v, want %v", got, tc.got)
				}
				if tc.wantErr == "" {
					if err != nil {
						t.Fatalf("CheckTLS: %v", err)
					}
					return
				}
				if err == nil || !strings.HasPrefix(err.Error(), string(proto)+": ") || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("CheckTLS error = %v, want %q", err, string(proto)+": … "+tc.wantErr)
				}
			})
		}
	}
	// cleartext has no TLS to check
	if got, err := prober.CheckTLS(context.Background(), H1C, matching.h1cPort, "test", profile, nil); got != nil || err != nil {
		t.Errorf("CheckTLS(h1c) = %v, %v; want nil, nil", got, err)
	}
}

func TestParseProtocol(t *testing.T) {
	t.Parallel()
	for _, p := range Protocols {
		if got, err := ParseProtocol(string(p)); err != nil || got != p {
			t.Errorf("ParseProtocol(%q) = %q, %v", p, got, err)
		}
	}
	if _, err := ParseProtocol("http3"); err == nil || !strings.Contains(err.Error(), "h1, h1c, h2, h3") {
		t.Errorf("ParseProtocol(http3) error = %v, want the list of protocols", err)
	}
	wire := map[Protocol]string{H1: "HTTP/1.1", H1C: "HTTP/1.1", H2: "HTTP/2.0", H3: "HTTP/3.0"}
	for p, want := range wire {
		if got := p.Wire(); got != want {
			t.Errorf("%s.Wire() = %s, want %s", p, got, want)
		}
	}
}

func TestPrintStatus(t *testing.T) {
	t.Parallel()
	x25519 := Negotiated{Version: "1.3", Group: "X25519", Cipher: "TLS_AES_128_GCM_SHA256"}
	hybrid := Negotiated{Version: "1.3", Group: "X25519MLKEM768", Cipher: "TLS_AES_128_GCM_SHA256"}
	rows := []TargetStatus{
		{
			Name: "direct", Version: "upstream", PID: 10, Health: map[Protocol]error{H1: nil, H1C: nil, H2: nil, H3: nil},
			TLSProfile: "x25519", TLS: map[Protocol]*Negotiated{H1: &x25519, H2: &x25519, H3: &x25519},
		},
		{
			Name: "nginx", Version: "1.22.1", PID: 11, Health: map[Protocol]error{H1: nil, H1C: nil, H2: nil},
			TLSProfile: "x25519", TLS: map[Protocol]*Negotiated{H1: &x25519, H2: &hybrid},
		},
		{Name: "caddy", Version: "2.6.2", PID: 12, Health: map[Protocol]error{H1: nil, H1C: nil, H2: nil, H3: errors.New("timeout")}},
		{Name: "envoy", Version: "1.40.0"},
	}
	var buf bytes.Buffer
	PrintStatus(&buf, rows)
	out := buf.String()
	lines := strings.Split(out, "\n")
	tests := []struct {
		line int
		want string
	}{
		{1, "h1 ok, h1c ok, h2 ok, h3 ok"},
		{1, "x25519: TLS 1.3 X25519 TLS_AES_128_GCM_SHA256, no resumption"},
		{2, "h1 ok, h1c ok, h2 ok, no h3"},
		{2, "x25519: h1: TLS 1.3 X25519 TLS_AES_128_GCM_SHA256, no resumption; h2: TLS 1.3 X25519MLKEM768"},
		{3, "h1 ok, h1c ok, h2 ok, h3 FAIL"},
		{4, "down"},
		{5, "caddy h3: timeout"},
	}
	for _, tc := range tests {
		if tc.line >= len(lines) || !strings.Contains(lines[tc.line], tc.want) {
			t.Errorf("line %d lacks %q:\n%s", tc.line, tc.want, out)
		}
	}
}

// testProber is a prober trusting a CA of the test's own, and that CA's bench.test leaf.
func testProber(t *testing.T) (Certs, *Prober) {
	t.Helper()
	certs, err := EnsureCerts(t.TempDir(), "bench.test")
	if err != nil {
		t.Fatal(err)
	}
	prober, err := NewProber("bench.test", "127.0.0.1", certs.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	return certs, prober
}
