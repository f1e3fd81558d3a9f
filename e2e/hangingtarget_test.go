package e2e

import (
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/quic-go/quic-go/http3"
)

// hang is how a hanging target (startHangingTarget) fails the measured samples, once setup()'s
// probe has been answered.
type hang string

const (
	// hangSilent accepts every connection after the first and never answers it: a TCP accept
	// with no answer, a TLS ClientHello never answered; over QUIC, a handshake that never ends.
	hangSilent hang = "silent"
	// hangStall answers, then sends nothing more: a stream's head and first chunk, an SSE
	// stream's first event, a WebSocket upgrade's 101.
	hangStall hang = "stall"
)

// hangingTarget is a small target on 127.0.0.1 that serves setup()'s probe as the upstream does
// (it relays it to bin/upstream, so the bodies are the upstream's) and hangs the samples after
// it: over cleartext HTTP/1.1 on h1c, TLS (h1 and h2 by ALPN) on tls, and QUIC (h3) on the same
// port number over UDP, with the certificate of certs.
type hangingTarget struct {
	h1c, tls int
}

// startHangingTarget starts a hanging target of its own for one k6 run (its "first
// connection" is that run's setup).
func startHangingTarget(t *testing.T, upstream string, cert tls.Certificate, how hang) hangingTarget {
	t.Helper()
	relay := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: upstream})
	relay.FlushInterval = -1
	done := make(chan struct{})
	handler := http.Handler(relay)
	if how == hangStall {
		handler = stallHandler(relay, done)
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}

	h1c := listenHanging(t, how, done)
	tcpTLS, udp := listenTCPAndUDP(t)
	tlsLn := listenHangingOn(t, tcpTLS, how, done)
	// a server each: one http.Server serving cleartext and TLS sets up h2 for whichever
	// starts first, and its TLS listener would offer h2 by ALPN without serving it
	srv := &http.Server{Handler: handler}
	tlsSrv := &http.Server{Handler: handler, TLSConfig: tlsConf.Clone()}
	go func() { _ = srv.Serve(h1c) }()
	go func() { _ = tlsSrv.ServeTLS(tlsLn, "", "") }()

	h3Conf := tlsConf.Clone()
	if how == hangSilent {
		// the first QUIC handshake (setup's) goes through; every later one waits here, so the
		// client's never ends
		var handshakes atomic.Int32
		h3Conf.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			if handshakes.Add(1) > 1 {
				<-done
				return nil, errors.New("the hanging target is closed")
			}
			return nil, nil
		}
	}
	h3 := &http3.Server{TLSConfig: http3.ConfigureTLSConfig(h3Conf), Handler: handler}
	go func() { _ = h3.Serve(udp) }()
	t.Cleanup(func() {
		close(done)
		_ = srv.Close()
		_ = tlsSrv.Close()
		_ = h3.Close()
		_ = udp.Close()
	})
	return hangingTarget{h1c: h1c.Addr().(*net.TCPAddr).Port, tls: tcpTLS.Addr().(*net.TCPAddr).Port}
}

// stallHandler relays setup()'s requests and stalls the measured ones of stream, sse and ws:
// they ask for a paced stream (interval_ms other than 0) or an upgrade, which setup never does.
func stallHandler(relay http.Handler, done <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/ws" && strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
			upgradeThenNothing(w, r, done)
		case r.URL.Path == "/stream" && q.Get("interval_ms") != "0":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte(strings.Repeat("s", 4096)))
			waitFlushed(w, r, done)
		case r.URL.Path == "/sse" && q.Get("interval_ms") != "0":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = fmt.Fprintf(w, "event: tick\ndata: {\"seq\":0,\"ts\":1}\n\n")
			waitFlushed(w, r, done)
		default:
			relay.ServeHTTP(w, r)
		}
	}
}

// waitFlushed sends what w holds and then nothing, until the client or the target goes, and
// never ends the response: returning would end it cleanly (the last chunk, END_STREAM), which a
// client reading as the server sees its request end could take for a whole, short body.
func waitFlushed(w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
	_ = http.NewResponseController(w).Flush()
	select {
	case <-r.Context().Done():
	case <-done:
	}
	panic(http.ErrAbortHandler)
}

// upgradeThenNothing answers a WebSocket upgrade with its 101 and sends nothing after it.
func upgradeThenNothing(w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer func() { _ = conn.Close() }()
	accept := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	_, _ = fmt.Fprintf(buf, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(accept[:]))
	_ = buf.Flush()
	go func() {
		<-done
		_ = conn.Close()
	}()
	_, _ = io.Copy(io.Discard, conn) // until the client goes
}

// listenTCPAndUDP listens on one port number of 127.0.0.1 over TCP and UDP, as a target's TLS
// port is (h3 on the same number).
func listenTCPAndUDP(t *testing.T) (net.Listener, net.PacketConn) {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		udp, err := net.ListenPacket("udp", ln.Addr().String())
		if err == nil {
			return ln, udp
		}
		_ = ln.Close()
		if !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatal(err)
		}
	}
	t.Fatal("no port of 127.0.0.1 free over both TCP and UDP")
	return nil, nil
}

func listenHanging(t *testing.T, how hang, done <-chan struct{}) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return listenHangingOn(t, ln, how, done)
}

// listenHangingOn hands ln's first connection (setup's) to the server, and with hangSilent
// holds every later one unread and unanswered until the target is closed.
func listenHangingOn(t *testing.T, ln net.Listener, how hang, done <-chan struct{}) net.Listener {
	t.Helper()
	if how != hangSilent {
		return ln
	}
	return &silentAfterFirst{Listener: ln, done: done}
}

type silentAfterFirst struct {
	net.Listener
	done     <-chan struct{}
	accepted atomic.Int32
}

func (l *silentAfterFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.accepted.Add(1) == 1 {
			return c, nil
		}
		go func() {
			<-l.done
			_ = c.Close()
		}()
	}
}

// hangingTargetsFile writes a targets file naming each target of ports.
func hangingTargetsFile(t *testing.T, ports map[string]hangingTarget) string {
	t.Helper()
	targets := map[string]any{}
	for name, p := range ports {
		targets[name] = map[string]int{"tls": p.tls, "h1c": p.h1c}
	}
	data, err := json.Marshal(map[string]any{"hostname": "bench.test", "address": "127.0.0.1", "targets": targets})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "targets.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
