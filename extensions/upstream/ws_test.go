package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func (s *stack) dialWS(t *testing.T, secure bool) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{
		HandshakeTimeout: 5 * time.Second,
		TLSClientConfig:  &tls.Config{RootCAs: s.roots, ServerName: testHost},
	}
	url := "ws://" + s.h1cAddr + "/ws"
	if secure {
		tlsAddr := s.tlsAddr
		d.NetDialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, network, tlsAddr)
		}
		url = "wss://" + strings.TrimPrefix(s.tlsURL, "https://") + "/ws"
	}
	c, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status = %d, want 101", resp.StatusCode)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	return c
}

func TestWebSocket(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	messages := []struct {
		name string
		kind int
		data []byte
	}{
		{"text", websocket.TextMessage, []byte("hello, upstream")},
		{"binary", websocket.BinaryMessage, []byte{0, 1, 2, 0xfe, 0xff}},
		{"empty text", websocket.TextMessage, nil},
		{"large binary", websocket.BinaryMessage, Pattern(300_000)},
	}
	for _, secure := range []bool{false, true} {
		name := "ws"
		if secure {
			name = "wss"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := s.dialWS(t, secure)
			kind, welcome, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("reading the welcome: %v", err)
			}
			if kind != websocket.TextMessage || string(welcome) != wsWelcome {
				t.Fatalf("welcome = %d %q, want text %q", kind, welcome, wsWelcome)
			}
			for _, m := range messages {
				if err := c.WriteMessage(m.kind, m.data); err != nil {
					t.Fatalf("%s: write: %v", m.name, err)
				}
				kind, got, err := c.ReadMessage()
				if err != nil {
					t.Fatalf("%s: read: %v", m.name, err)
				}
				if kind != m.kind || !bytes.Equal(got, m.data) {
					t.Errorf("%s: echo is type %d, %d bytes; want type %d, %d bytes", m.name, kind, len(got), m.kind, len(m.data))
				}
			}
			closing := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "done")
			if err := c.WriteControl(websocket.CloseMessage, closing, time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			_, _, err = c.ReadMessage()
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.Errorf("after close: %v, want the close echoed", err)
			}
		})
	}
}

// TestWebSocketNotUpgrade: a plain GET /ws is refused, over every protocol;
// WebSockets are HTTP/1.1 only (over h2 and h3 they would need extended
// CONNECT, which no client of the suite speaks).
func TestWebSocketNotUpgrade(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	for _, p := range allProtos {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			resp, _ := get(t, s.client(t, p, true), s.url(p, "/ws"))
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("plain GET /ws: status = %d, want 400", resp.StatusCode)
			}
		})
	}
}

// TestWebSocketShutdown: a stop tells open WebSockets the server is going
// away rather than cutting them.
func TestWebSocketShutdown(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	c := s.dialWS(t, false)
	if _, _, err := c.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Errorf("after shutdown: %v, want close 1001 (going away)", err)
	}
}
