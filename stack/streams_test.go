package stack

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"
)

// startH2Server is Go's own HTTP/2 server over TLS with certs, allowing maxStreams concurrent
// streams per connection; it returns its port.
func startH2Server(t *testing.T, certs Certs, maxStreams int) int {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	hs := &http.Server{
		Handler:   rootHandler(RootBodyBytes),
		Protocols: &protocols,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}},
		HTTP2:     &http.HTTP2Config{MaxConcurrentStreams: maxStreams},
		ErrorLog:  log.New(io.Discard, "", 0), // the untrusted case's handshake errors
	}
	go func() { _ = hs.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// startH3Server is quic-go's HTTP/3 server with certs, allowing maxStreams bidirectional
// streams; it returns its UDP port.
func startH3Server(t *testing.T, certs Certs, maxStreams int64) int {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	h3 := &http3.Server{
		Handler:    rootHandler(RootBodyBytes),
		TLSConfig:  &tls.Config{Certificates: []tls.Certificate{cert}},
		QUICConfig: &quic.Config{MaxIncomingStreams: maxStreams},
	}
	go func() { _ = h3.Serve(udp) }()
	t.Cleanup(func() {
		_ = h3.Close()
		_ = udp.Close()
	})
	return udp.LocalAddr().(*net.UDPAddr).Port
}

// startRawH2 is a TLS server offering alpn (""; no ALPN at all) that hands each connection, once its handshake is
// done, to serve; it returns its port.
func startRawH2(t *testing.T, certs Certs, alpn string, serve func(c net.Conn)) int {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}}
	if alpn != "" {
		conf.NextProtos = []string{alpn}
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if err := c.(*tls.Conn).Handshake(); err != nil {
					return
				}
				serve(c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// h2Answer reads the client preface and answers with first, as a server's first frame.
func h2Answer(first func(fr *http2.Framer) error) func(net.Conn) {
	return func(c net.Conn) {
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
			return
		}
		bw := bufio.NewWriter(c)
		fr := http2.NewFramer(bw, c)
		if first(fr) != nil || bw.Flush() != nil {
			return
		}
		_, _ = io.Copy(io.Discard, c) // until the client closes
	}
}

// freePort is a port nothing listens on, TCP and UDP.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestOfferedStreams: real servers on loopback announce their limits, and OfferedStreams
// reads each as the server announced it, over HTTP/2 (SETTINGS) and HTTP/3 (QUIC transport
// parameters) alike; what is not an answer fails, naming the protocol, host and port.
func TestOfferedStreams(t *testing.T) {
	t.Parallel()
	certs, prober := testProber(t)
	otherCerts, err := EnsureCerts(t.TempDir(), "bench.test")
	if err != nil {
		t.Fatal(err)
	}
	noSetting := startRawH2(t, certs, "h2", h2Answer(func(fr *http2.Framer) error { return fr.WriteSettings() }))
	bigSetting := startRawH2(t, certs, "h2", h2Answer(func(fr *http2.Framer) error {
		return fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1<<32 - 1})
	}))
	zero := startRawH2(t, certs, "h2", h2Answer(func(fr *http2.Framer) error {
		return fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 0})
	}))
	pingFirst := startRawH2(t, certs, "h2", h2Answer(func(fr *http2.Framer) error { return fr.WritePing(false, [8]byte{}) }))
	h1Only := startRawH2(t, certs, "http/1.1", func(net.Conn) {})
	noALPN := startRawH2(t, certs, "", func(net.Conn) {})
	closed := freePort(t)

	tests := []struct {
		name    string
		proto   Protocol
		port    int
		want    int
		wantErr string // "" when the value is read
	}{
		{"h2 1 stream", H2, startH2Server(t, certs, 1), 1, ""},
		{"h2 250 streams", H2, startH2Server(t, certs, 250), 250, ""},
		{"h2 100 streams", H2, startH2Server(t, certs, 100), 100, ""},
		{"h2 no setting: no limit", H2, noSetting, UnlimitedStreams, ""},
		{"h2 2^32-1: no limit", H2, bigSetting, UnlimitedStreams, ""},
		{"h2 0 streams", H2, zero, 0, ""},
		{"h3 1 stream", H3, startH3Server(t, certs, 1), 1, ""},
		{"h3 100 streams", H3, startH3Server(t, certs, 100), 100, ""},
		{"h3 more than the cap", H3, startH3Server(t, certs, 2*StreamsProbeCap), StreamsProbeCap, ""},
		{"h3 none", H3, startH3Server(t, certs, -1), 0, ""},
		{"h1 carries one at a time", H1, closed, 1, ""},
		{"h1c carries one at a time", H1C, closed, 1, ""},
		{"h2 first frame not SETTINGS", H2, pingFirst, 0, "h2 bench.test:" + strconv.Itoa(pingFirst) + ": offered streams: the server's first frame is [FrameHeader PING"},
		{"h2 no h2 in ALPN", H2, h1Only, 0, "no application protocol"},
		{"h2 no ALPN", H2, noALPN, 0, `negotiated ALPN "", want h2`},
		{"h2 nothing listening", H2, closed, 0, "h2 bench.test:" + strconv.Itoa(closed) + ": offered streams: TLS dial 127.0.0.1:" + strconv.Itoa(closed)},
		{"h2 untrusted certificate", H2, startH2Server(t, otherCerts, 1), 0, "certificate"},
		{"h3 nothing listening", H3, closed, 0, "h3 bench.test:" + strconv.Itoa(closed) + ": offered streams: QUIC dial 127.0.0.1:" + strconv.Itoa(closed)},
		{"h3 untrusted certificate", H3, startH3Server(t, otherCerts, 1), 0, "certificate"},
		{"unknown protocol", Protocol("h4"), closed, 0, `offered streams: unknown protocol "h4"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			got, err := prober.OfferedStreams(context.Background(), tc.proto, tc.port)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("OfferedStreams = %d, %v; want an error containing %q", got, err, tc.wantErr)
				}
				// a silent UDP port is said within the QUIC handshake's idle timeout
				if d := time.Since(start); d > 4*time.Second {
					t.Errorf("failing OfferedStreams took %v", d)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("OfferedStreams = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// A server that completes the handshake and then says nothing holds OfferedStreams no longer
// than its context.
func TestOfferedStreamsSilentServer(t *testing.T) {
	t.Parallel()
	certs, prober := testProber(t)
	silent := startRawH2(t, certs, "h2", func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := prober.OfferedStreams(ctx, H2, silent)
	if err == nil || !strings.Contains(err.Error(), "read the server's SETTINGS: context deadline exceeded") {
		t.Fatalf("OfferedStreams error = %v, want the SETTINGS read cut by the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("OfferedStreams took %v with a 300ms context", d)
	}
}

// isStreamLimit knows quic-go's error in the form v0.65 returns it, and not a closed
// connection's.
func TestIsStreamLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&quic.StreamLimitReachedError{}, true},
		{quic.StreamLimitReachedError{}, true},
		{&quic.ApplicationError{ErrorCode: 0x100}, false},
		{errors.New("too many open streams"), false},
	} {
		if got := isStreamLimit(tc.err); got != tc.want {
			t.Errorf("isStreamLimit(%T) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// start records what each protocol offers in the state's record of the target and says it on
// the up line, after the TLS it negotiated.
func TestStartRecordsOfferedStreams(t *testing.T) {
	t.Parallel()
	certs, prober := testProber(t)
	// Go's defaults: net/http offers 250 streams, quic-go 100
	srv := startTLSServer(t, certs, rootHandler(RootBodyBytes), true, func(c *tls.Config) { c.SessionTicketsDisabled = true })
	var out bytes.Buffer
	s := &Stack{
		Config: &Config{TLSProfile: "test", TLSProfiles: map[string]TLSProfile{
			"test": {Version: "1.3", Group: "X25519MLKEM768", Cipher: "TLS_AES_128_GCM_SHA256"},
		}},
		Out:          &out,
		ReadyTimeout: 5 * time.Second,
	}
	r := &Running{Ports: Ports{TLS: srv.tlsPort, H1C: srv.h1cPort}, Protocols: []Protocol{H1, H1C, H2, H3}}
	err := s.start(context.Background(), "fake", r, []string{"sleep", "300"}, os.Environ(), t.TempDir(), prober)
	t.Cleanup(func() { _ = r.Stop(5 * time.Second) })
	if err != nil {
		t.Fatal(err)
	}
	if want := map[Protocol]int{H2: 250, H3: 100}; !reflect.DeepEqual(r.MaxStreams, want) {
		t.Errorf("MaxStreams = %v, want %v", r.MaxStreams, want)
	}
	if want := "TLS 1.3 X25519MLKEM768 TLS_AES_128_GCM_SHA256, no resumption; h2: 250 streams per connection, h3: 100 streams per connection\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("up line %q, want it to end %q", out.String(), want)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"max_streams":{"h2":250,"h3":100}`; !strings.Contains(string(data), want) {
		t.Errorf("state record %s lacks %s", data, want)
	}
	st := &State{Targets: map[string]*Running{"fake": r, "plain": {}}}
	if got, want := st.OfferedStreams(), map[string]map[Protocol]int{"fake": {H2: 250, H3: 100}}; !reflect.DeepEqual(got, want) {
		t.Errorf("State.OfferedStreams() = %v, want %v", got, want)
	}
}

// A value that cannot be read is a warning: the target stays up, without that protocol's
// value.
func TestReadStreamsWarns(t *testing.T) {
	t.Parallel()
	certs, prober := testProber(t)
	h2 := startH2Server(t, certs, 128) // and nothing on its UDP port
	var out bytes.Buffer
	s := &Stack{Out: &out}
	r := &Running{Ports: Ports{TLS: h2}, Protocols: []Protocol{H1, H2, H3}}
	s.readStreams(context.Background(), "nginx", r, prober)
	if want := map[Protocol]int{H2: 128}; !reflect.DeepEqual(r.MaxStreams, want) {
		t.Errorf("MaxStreams = %v, want %v", r.MaxStreams, want)
	}
	want := "warning: target nginx: h3 bench.test:" + strconv.Itoa(h2) + ": offered streams: QUIC dial"
	if !strings.HasPrefix(out.String(), want) || !strings.Contains(out.String(), "(its streams per connection are not recorded)") {
		t.Errorf("output %q, want a warning starting %q", out.String(), want)
	}
}

func TestStreamsSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		offered map[Protocol]int
		want    string
	}{
		{nil, ""},
		{map[Protocol]int{H2: 250}, "; h2: 250 streams per connection"},
		{map[Protocol]int{H3: 1, H2: 128}, "; h2: 128 streams per connection, h3: 1 streams per connection"},
		{map[Protocol]int{H2: UnlimitedStreams, H3: StreamsProbeCap}, "; h2: no limit on streams per connection, h3: at least 10000 streams per connection"},
	} {
		if got := streamsSummary(tc.offered); got != tc.want {
			t.Errorf("streamsSummary(%v) = %q, want %q", tc.offered, got, tc.want)
		}
	}
}

func TestPrintStatusStreams(t *testing.T) {
	t.Parallel()
	rows := []TargetStatus{
		{Name: "direct", PID: 10, Health: map[Protocol]error{H1: nil, H2: nil, H3: nil}, Streams: map[Protocol]int{H2: 250, H3: 100}},
		{Name: "nginx", PID: 11, Health: map[Protocol]error{H2: nil}, Streams: map[Protocol]int{H2: UnlimitedStreams}},
		{
			Name: "caddy", PID: 12, Health: map[Protocol]error{H2: nil, H3: nil},
			Streams: map[Protocol]int{H2: 1}, StreamsErr: map[Protocol]error{H3: errors.New("QUIC dial: timeout")},
		},
		{Name: "envoy"},
	}
	var buf bytes.Buffer
	PrintStatus(&buf, rows)
	out := buf.String()
	lines := strings.Split(out, "\n")
	for _, tc := range []struct {
		line int
		want string
	}{
		{0, "STREAMS/CONN"},
		{1, "h2 250, h3 100"},
		{2, "h2 no limit"},
		{3, "h2 1, h3 ?"},
		{3, "h3 ok"}, // a value not read is no ill health
		{4, "down"},
		{5, "caddy h3: warning: streams per connection not read: QUIC dial: timeout"},
	} {
		if tc.line >= len(lines) || !strings.Contains(lines[tc.line], tc.want) {
			t.Errorf("line %d lacks %q:\n%s", tc.line, tc.want, out)
		}
	}
}
