package upstream

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Bad input, on real listeners: every answer is a 4xx or a closed
// connection, and the server goes on serving.

// testHeaderTimeout stands for ReadHeaderTimeout in tests: short enough to
// wait for, long enough for a loaded machine to send a request in time.
const testHeaderTimeout = 300 * time.Millisecond

// closeSlack is how late after its deadline a connection may be seen closed
// on a busy 2-CPU machine.
const closeSlack = 2 * time.Second

// rawH1C dials the h1c listener, with a deadline that fails a hung test.
func rawH1C(t *testing.T, s *stack) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", s.h1cAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn
}

// expectClosed reads conn until the server closes it: an error other than
// EOF or a reset (a timeout above all) fails.
func expectClosed(t *testing.T, conn net.Conn, within time.Duration) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, conn)
	if err != nil && !isReset(err) {
		t.Fatalf("connection not closed by the server within %s: %v", within, err)
	}
}

func isReset(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection reset")
}

// stillServing fails unless a new connection gets /healthz.
func stillServing(t *testing.T, s *stack) {
	t.Helper()
	resp, body := get(t, s.client(t, protoH1C, false), s.url(protoH1C, "/healthz"))
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Fatalf("after bad input: /healthz = %d %q, want 200 ok", resp.StatusCode, body)
	}
}

// TestOversizedUpload: an upload over the limit, declared or chunked, gets
// 413 (a client still sending may see the connection reset instead), the
// connection is closed rather than read to the end, and the server keeps
// serving.
func TestOversizedUpload(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	over := Pattern(testUploadLimit + 1)
	tests := []struct {
		name   string
		header string
		body   []byte
		// mayReset: the body is still on its way when the server answers
		// and closes, so the client may see a reset before the 413.
		mayReset bool
		status   int
	}{
		{"declared over, no body", "Content-Length: 1099511627776", nil, false, 413},
		{"declared over, body sent anyway", fmt.Sprintf("Content-Length: %d", len(over)), over, true, 413},
		{"chunked over", "Transfer-Encoding: chunked", fmt.Appendf(nil, "%x\r\n%s\r\n0\r\n\r\n", len(over), over), false, 413},
		{"one chunk declared over, cut short", "Transfer-Encoding: chunked", fmt.Appendf(nil, "%x\r\n%s", 1<<40, over), false, 413},
		// not a size the server can read at all: the body is malformed
		{"chunk size overflows", "Transfer-Encoding: chunked", []byte("fffffffffffffffffffff\r\n"), false, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn := rawH1C(t, s)
			go func() {
				// errors: the server may close before taking it all
				_, _ = fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: %s\r\n%s\r\n\r\n", testHost, tt.header)
				_, _ = conn.Write(tt.body)
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			switch {
			case err != nil && tt.mayReset && isReset(err):
				// closed without a word: allowed while the body was coming
			case err != nil:
				t.Fatalf("reading the answer: %v", err)
			default:
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tt.status {
					t.Fatalf("status = %d %q, want %d", resp.StatusCode, body, tt.status)
				}
				if len(body) > maxStaticBody {
					t.Errorf("%d-byte answer, want at most %d", len(body), maxStaticBody)
				}
				if !resp.Close {
					t.Errorf("no Connection: close: the server would read the rest of the body as a request")
				}
			}
			expectClosed(t, conn, closeSlack)
			stillServing(t, s)
		})
	}

	// HTTP/2 answers 413 on the stream and keeps the connection: a
	// GOAWAY would fail every other request on it.
	t.Run("h2 keeps its connection", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, protoH2, true)
		var reused []bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
		for _, chunked := range []bool{false, true} {
			var body io.Reader = bytes.NewReader(over)
			if chunked {
				body = unsized{body}
			}
			req, _ := http.NewRequest(http.MethodPost, s.url(protoH2, "/upload"), body)
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("chunked=%v: %v", chunked, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("chunked=%v: status = %d, want 413", chunked, resp.StatusCode)
			}
		}
		req, _ := http.NewRequest(http.MethodGet, s.url(protoH2, "/healthz"), nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz after 413s: %d", resp.StatusCode)
		}
		if len(reused) != 3 || reused[1] != true || reused[2] != true {
			t.Errorf("connection reused per request: %v, want [false true true]", reused)
		}
	})
}

// TestUnknownRoute: a path that is not a route is 404, over every protocol,
// whatever it looks like: routing is on the exact path, so near misses too.
func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	paths := []string{"/nope", "/JSON", "/json/", "/upload/x", "/ws/", "/debug", "/%2e%2e/etc/passwd", "/sse%00", "//healthz"}
	for _, p := range allProtos {
		c := s.client(t, p, true)
		for _, path := range paths {
			t.Run(string(p)+path, func(t *testing.T) {
				t.Parallel()
				resp, body := get(t, c, s.url(p, path))
				if resp.StatusCode != http.StatusNotFound || string(body) != "404 page not found\n" {
					t.Errorf("%s = %d %q, want 404", path, resp.StatusCode, body)
				}
			})
		}
	}
}

// TestBadRequestHead: requests net/http refuses before any handler, with
// its own short, fixed answer. Two of them are 5xx by RFC 9112, about the
// protocol rather than a failure of the server: 501 for a
// Transfer-Encoding it does not implement (§6.1), 505 for an HTTP version
// it does not speak. FuzzHandler leaves these to this test.
func TestBadRequestHead(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	tests := []struct {
		name    string
		request string
		status  int
	}{
		{"no Host", "GET / HTTP/1.1\r\n\r\n", 400},
		{"header without colon", "GET / HTTP/1.1\r\nHost: x\r\nbogus\r\n\r\n", 400},
		{"space in method", "G T / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"control byte in target", "GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"negative Content-Length", "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400},
		{"two Content-Lengths", "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"headers over 1 MiB", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20+4096) + "\r\n\r\n", 431},
		{"unknown Transfer-Encoding", "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"HTTP/2.0 over h1c", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn := rawH1C(t, s)
			go func() { _, _ = io.WriteString(conn, tt.request) }()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d %q, want %d", resp.StatusCode, body, tt.status)
			}
			if len(body) > maxStaticBody {
				t.Errorf("%d-byte answer, want at most %d", len(body), maxStaticBody)
			}
			expectClosed(t, conn, closeSlack)
		})
	}
	t.Cleanup(func() { stillServing(t, s) })
}

// TestSlowloris: a client that does not finish its request headers, or its
// TLS handshake, in ReadHeaderTimeout (testHeaderTimeout here) is
// disconnected, at that deadline and not before, without a 2xx.
func TestSlowloris(t *testing.T) {
	t.Parallel()
	s := newStackWith(t, func(c *Config) { c.ReadHeaderTimeout = testHeaderTimeout })
	h1c, tlsAddr := s.h1cAddr, s.tlsAddr
	tests := []struct {
		name string
		addr string
		// send writes what the client sends, until it fails
		send func(net.Conn)
	}{
		{"silent connection", h1c, func(net.Conn) {}},
		{"headers never finished", h1c, func(c net.Conn) {
			_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
		}},
		{"one byte every 20 ms", h1c, func(c net.Conn) {
			for _, b := range []byte("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 1000)) {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}},
		{"silent TLS connection", tlsAddr, func(net.Conn) {}},
		{"TLS handshake never finished", tlsAddr, func(c net.Conn) {
			_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}) // a ClientHello record, cut
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			conn, err := net.Dial("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			go tt.send(conn)
			_ = conn.SetReadDeadline(start.Add(testHeaderTimeout + closeSlack))
			got, err := io.ReadAll(conn)
			elapsed := time.Since(start)
			if err != nil && !isReset(err) {
				t.Fatalf("not disconnected within %s: %v", testHeaderTimeout+closeSlack, err)
			}
			if elapsed < testHeaderTimeout {
				t.Errorf("disconnected after %s, before the %s header timeout", elapsed, testHeaderTimeout)
			}
			if len(got) > 0 && !bytes.HasPrefix(got, []byte("HTTP/1.1 4")) {
				t.Errorf("answered %q, want nothing or a 4xx", got[:min(len(got), 40)])
			}
		})
	}
}

// TestHeaderTimeoutSparesLongRequests: ReadHeaderTimeout (testHeaderTimeout
// here) ends with the headers: streams, slow uploads, idle keep-alive
// connections and WebSockets that last several times longer are not cut.
func TestHeaderTimeoutSparesLongRequests(t *testing.T) {
	t.Parallel()
	s := newStackWith(t, func(c *Config) { c.ReadHeaderTimeout = testHeaderTimeout })
	long := 3 * testHeaderTimeout
	ms := long.Milliseconds() / 3

	t.Run("sse", func(t *testing.T) {
		t.Parallel()
		resp, body := get(t, s.client(t, protoH1C, false), s.url(protoH1C, fmt.Sprintf("/sse?count=4&interval_ms=%d", ms)))
		if resp.StatusCode != http.StatusOK || strings.Count(string(body), "event: tick") != 4 {
			t.Errorf("status %d, %d events, want 200 and 4", resp.StatusCode, strings.Count(string(body), "event: tick"))
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		resp, body := get(t, s.client(t, protoH1C, false), s.url(protoH1C, fmt.Sprintf("/stream?chunks=4&chunk_bytes=10&interval_ms=%d", ms)))
		if resp.StatusCode != http.StatusOK || len(body) != 40 {
			t.Errorf("status %d, %d bytes, want 200 and 40", resp.StatusCode, len(body))
		}
	})
	t.Run("slow upload body", func(t *testing.T) {
		t.Parallel()
		pr, pw := io.Pipe()
		go func() {
			for range 4 {
				time.Sleep(long / 4)
				_, _ = pw.Write(Pattern(100))
			}
			_ = pw.Close()
		}()
		resp, err := s.client(t, protoH1C, false).Post(s.url(protoH1C, "/upload"), "application/octet-stream", pr)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != `{"bytes":400}` {
			t.Errorf("got %d %s, want 200 {\"bytes\":400}", resp.StatusCode, body)
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, protoH1C, true)
		get(t, c, s.url(protoH1C, "/healthz"))
		time.Sleep(long)
		var reused bool
		req, _ := http.NewRequest(http.MethodGet, s.url(protoH1C, "/healthz"), nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		}))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("second request on the idle connection: %v", err)
		}
		_ = resp.Body.Close()
		if !reused {
			t.Errorf("the idle connection was closed: the second request needed a new one")
		}
	})
	t.Run("idle websocket", func(t *testing.T) {
		t.Parallel()
		c := s.dialWS(t, false)
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(long)
		wsEcho(t, c)
	})
}

// wsEcho fails unless c's message comes back.
func wsEcho(t *testing.T, c *websocket.Conn) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte("still there")); err != nil {
		t.Fatalf("write: %v", err)
	}
	_, got, err := c.ReadMessage()
	if err != nil || string(got) != "still there" {
		t.Fatalf("echo = %q, %v", got, err)
	}
}

// wsFrame is a client frame: fin and opcode, then the length as given
// (declared may differ from len(payload)), masked with key unless unmasked.
func wsFrame(b0 byte, declared uint64, payload []byte, masked bool) []byte {
	f := []byte{b0}
	var m byte
	if masked {
		m = 0x80
	}
	switch {
	case declared < 126:
		f = append(f, m|byte(declared))
	case declared < 1<<16:
		f = append(f, m|126)
		f = binary.BigEndian.AppendUint16(f, uint16(declared))
	default:
		f = append(f, m|127)
		f = binary.BigEndian.AppendUint64(f, declared)
	}
	if !masked {
		return append(f, payload...)
	}
	key := [4]byte{1, 2, 3, 4}
	f = append(f, key[:]...)
	for i, b := range payload {
		f = append(f, b^key[i%4])
	}
	return f
}

// TestWebSocketBadFrames: after a good upgrade, a frame the protocol forbids
// gets a close frame with the reason's code and the connection dropped; a
// frame cut short by the client's FIN, or a length no frame can have, a
// dropped connection. None reaches memory: a length over wsReadLimit is
// refused from the frame header. Then a new WebSocket is served.
func TestWebSocketBadFrames(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	hello := []byte("hello")
	tests := []struct {
		name  string
		bytes []byte
		// code is the close code the server must send; 0: none, the
		// connection is dropped.
		code int
	}{
		{"unmasked", wsFrame(0x81, 5, hello, false), websocket.CloseProtocolError},
		{"reserved opcode 3", wsFrame(0x83, 0, nil, true), websocket.CloseProtocolError},
		{"reserved control opcode 0xb", wsFrame(0x8b, 0, nil, true), websocket.CloseProtocolError},
		{"RSV1 without an extension", wsFrame(0xc1, 5, hello, true), websocket.CloseProtocolError},
		{"ping over 125 bytes", wsFrame(0x89, 126, Pattern(126), true), websocket.CloseProtocolError},
		{"continuation with nothing to continue", wsFrame(0x80, 5, hello, true), websocket.CloseProtocolError},
		{"frame over the read limit", wsFrame(0x82, wsReadLimit+1, nil, true), websocket.CloseMessageTooBig},
		{"frame of 1 TiB", wsFrame(0x82, 1<<40, nil, true), websocket.CloseMessageTooBig},
		{
			"message over the read limit in two frames",
			append(wsFrame(0x02, 1000, Pattern(1000), true), wsFrame(0x80, wsReadLimit-999, nil, true)...), websocket.CloseMessageTooBig,
		},
		{"length with the top bit set", wsFrame(0x82, 1<<63, nil, true), 0},
		{"truncated frame", wsFrame(0x81, 5, hello, true)[:4], 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := s.dialWS(t, false)
			if _, _, err := c.ReadMessage(); err != nil {
				t.Fatalf("welcome: %v", err)
			}
			nc := c.NetConn()
			if _, err := nc.Write(tt.bytes); err != nil {
				t.Fatal(err)
			}
			if tt.code == 0 {
				// the client is done sending: the server sees the frame end early
				_ = nc.(*net.TCPConn).CloseWrite()
			}
			_ = c.SetReadDeadline(time.Now().Add(closeSlack))
			_, _, err := c.ReadMessage()
			// gorilla reports a connection closed without a close frame as
			// close 1006, a code never sent on the wire
			want := tt.code
			if want == 0 {
				want = websocket.CloseAbnormalClosure
			}
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != want {
				t.Errorf("read: %v, want close %d", err, want)
			}
			expectClosed(t, nc, closeSlack)

			next := s.dialWS(t, false)
			if _, _, err := next.ReadMessage(); err != nil {
				t.Fatalf("welcome on a new WebSocket: %v", err)
			}
			wsEcho(t, next)
		})
	}
}
