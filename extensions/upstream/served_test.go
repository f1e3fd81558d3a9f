package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// servedCount is one /debug/served cell.
type servedCount struct {
	Requests int64 `json:"requests"`
	Bytes    int64 `json:"bytes"`
}

// servedReading is /debug/served decoded: listener, then route.
type servedReading map[string]map[string]servedCount

// readServed reads /debug/served over h1c with c and checks its shape: every
// listener, every route, nothing else.
func readServed(t *testing.T, s *stack, c *http.Client) servedReading {
	t.Helper()
	resp, body := get(t, c, s.url(protoH1C, "/debug/served"))
	if resp.StatusCode != http.StatusOK ||
		resp.Header.Get("Content-Type") != "application/json" ||
		resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("/debug/served: %d, Content-Type %q, Cache-Control %q",
			resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var got servedReading
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("/debug/served %s: %v", body, err)
	}
	if len(got) != len(listenerNames) {
		t.Fatalf("/debug/served has listeners %v, want %v", slices.Sorted(maps.Keys(got)), listenerNames)
	}
	paths := routePaths()
	for _, l := range listenerNames {
		cells, ok := got[l]
		if !ok || len(cells) != len(paths) {
			t.Fatalf("/debug/served[%q] = %v, want the routes %v", l, cells, paths)
		}
		for _, rt := range paths {
			if _, ok := cells[rt]; !ok {
				t.Fatalf("/debug/served[%q] lacks %q: %s", l, rt, body)
			}
		}
	}
	return got
}

// diff lists, as "listener route: field +got, want +want" lines, every cell
// that moved from before to after other than by want.
func (after servedReading) diff(before servedReading, want map[[2]string]servedCount) []string {
	var out []string
	for _, l := range listenerNames {
		for _, rt := range routePaths() {
			a, b, w := after[l][rt], before[l][rt], want[[2]string{l, rt}]
			got := servedCount{Requests: a.Requests - b.Requests, Bytes: a.Bytes - b.Bytes}
			if got != w {
				out = append(out, fmt.Sprintf("%s %s: +%d requests, +%d bytes; want +%d, +%d",
					l, rt, got.Requests, got.Bytes, w.Requests, w.Bytes))
			}
		}
	}
	return out
}

// servedDiff is how the counters moved from before short of want, read again for up to a second
// until they agree: a request is counted when its handler returns, which an h2 client can see
// the end of (a HEAD's END_STREAM) a moment before.
func servedDiff(t *testing.T, s *stack, c *http.Client, before servedReading, want map[[2]string]servedCount) []string {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		d := readServed(t, s, c).diff(before, want)
		if len(d) == 0 || time.Now().After(deadline) {
			return d
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listenerName is the /debug/served listener that p's requests reach.
func (p proto) listenerName() string {
	switch p {
	case protoH1C:
		return "h1c"
	case protoH3:
		return "h3"
	}
	return "tls"
}

// TestDebugServed: each request on a counted route moves its route's cell
// on the listener it came through, and no other, by its body bytes; 404s and
// /debug/* move nothing.
func TestDebugServed(t *testing.T) {
	t.Parallel()
	const received = -1 // wantBytes: what the client got (a timestamp or a message varies)
	tests := []struct {
		proto        proto
		method, path string
		body         string
		times        int
		route        string // the cell that must move; empty: none
		wantStatus   int
		wantBytes    int64 // per request
	}{
		{protoH1C, "GET", "/", "", 3, "/", 200, 4096},
		{protoH1, "GET", "/", "", 3, "/", 200, 4096},
		{protoH2, "GET", "/", "", 3, "/", 200, 4096},
		{protoH3, "GET", "/", "", 3, "/", 200, 4096},
		{protoH1C, "HEAD", "/", "", 2, "/", 200, 0},
		{protoH2, "HEAD", "/", "", 2, "/", 200, 0},
		{protoH3, "HEAD", "/", "", 2, "/", 200, 0},
		{protoH1C, "GET", "/json", "", 2, "/json", 200, int64(len(jsonDoc))},
		{protoH2, "GET", "/json", "", 2, "/json", 200, int64(len(jsonDoc))},
		{protoH3, "POST", "/json", "", 2, "/json", 200, int64(len(jsonDoc))},
		{protoH1, "GET", "/healthz", "", 1, "/healthz", 200, 2},
		{protoH3, "GET", "/healthz", "", 1, "/healthz", 200, 2},
		{protoH1C, "GET", "/bytes?size=100000", "", 2, "/bytes", 200, 100000},
		{protoH1, "GET", "/bytes?size=0", "", 2, "/bytes", 200, 0},
		{protoH2, "GET", "/bytes?size=70000", "", 2, "/bytes", 200, 70000},
		{protoH3, "GET", "/bytes?size=70000", "", 2, "/bytes", 200, 70000},
		{protoH2, "HEAD", "/bytes?size=70000", "", 1, "/bytes", 200, 0},
		{protoH1C, "GET", "/bytes?size=-1", "", 1, "/bytes", 400, received},
		{protoH3, "POST", "/bytes", "", 1, "/bytes", 405, received},
		{protoH1C, "POST", "/upload", strings.Repeat("u", 1000), 2, "/upload", 200, int64(len(`{"bytes":1000}`))},
		{protoH2, "PUT", "/upload", strings.Repeat("u", 1000), 2, "/upload", 200, int64(len(`{"bytes":1000}`))},
		{protoH3, "POST", "/upload", strings.Repeat("u", 1000), 2, "/upload", 200, int64(len(`{"bytes":1000}`))},
		{protoH1C, "GET", "/upload", "", 1, "/upload", 405, received},
		{protoH2, "POST", "/upload", strings.Repeat("u", testUploadLimit+1), 1, "/upload", 413, received},
		{protoH1C, "GET", "/stream?chunks=3&chunk_bytes=10", "", 1, "/stream", 200, 30},
		{protoH1, "GET", "/stream?chunks=3&chunk_bytes=10", "", 2, "/stream", 200, 30},
		{protoH2, "GET", "/stream?chunks=3&chunk_bytes=10", "", 2, "/stream", 200, 30},
		{protoH3, "GET", "/stream?chunks=3&chunk_bytes=10", "", 2, "/stream", 200, 30},
		{protoH2, "GET", "/stream?chunks=0", "", 1, "/stream", 400, received},
		{protoH1C, "GET", "/sse?count=2&interval_ms=0", "", 2, "/sse", 200, received},
		{protoH3, "GET", "/sse?count=2&interval_ms=0", "", 1, "/sse", 200, received},
		{protoH1, "GET", "/sse?count=x", "", 1, "/sse", 400, received},
		// a plain GET /ws is refused, and the refusal is an answer
		{protoH1C, "GET", "/ws", "", 1, "/ws", 400, received},
		{protoH2, "GET", "/ws", "", 1, "/ws", 400, received},
		{protoH3, "GET", "/ws", "", 1, "/ws", 400, received},
		{protoH1C, "GET", "/nope", "", 2, "", 404, 0},
		{protoH3, "GET", "/json/", "", 1, "", 404, 0},
		{protoH1C, "GET", "/debug/served", "", 2, "", 200, 0},
		{protoH2, "GET", "/debug/served", "", 1, "", 200, 0},
		{protoH3, "GET", "/debug/conns", "", 1, "", 200, 0},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/%s_%s_x%d", tt.proto, tt.method, tt.path, tt.times)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t)
			observer := s.client(t, protoH1C, true)
			before := readServed(t, s, observer)
			c := s.client(t, tt.proto, true)
			var got int64 // body bytes received
			for range tt.times {
				req, err := http.NewRequest(tt.method, s.url(tt.proto, tt.path), strings.NewReader(tt.body))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", tt.method, tt.path, err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if err != nil {
					t.Fatalf("%s %s: reading body: %v", tt.method, tt.path, err)
				}
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("%s %s: status %d, want %d", tt.method, tt.path, resp.StatusCode, tt.wantStatus)
				}
				got += n
			}
			want := map[[2]string]servedCount{}
			if tt.route != "" {
				wantBytes := tt.wantBytes * int64(tt.times)
				if tt.wantBytes == received {
					wantBytes = got
				}
				if wantBytes != got {
					t.Errorf("client received %d body bytes, want %d", got, wantBytes)
				}
				want[[2]string{tt.proto.listenerName(), tt.route}] = servedCount{Requests: int64(tt.times), Bytes: wantBytes}
			}
			for _, d := range servedDiff(t, s, observer, before, want) {
				t.Error(d)
			}
		})
	}
}

// TestDebugServedWebSocket: a session counts as one /ws request on its
// listener once upgraded, its bytes the payloads sent (welcome and echoes).
func TestDebugServedWebSocket(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{false, true} {
		listener := map[bool]string{false: "h1c", true: "tls"}[secure]
		t.Run(listener, func(t *testing.T) {
			t.Parallel()
			s := newStack(t)
			observer := s.client(t, protoH1C, true)
			before := readServed(t, s, observer)
			c := s.dialWS(t, secure)
			sent := [][]byte{[]byte("hello"), Pattern(10_000)}
			wantBytes := int64(len(wsWelcome))
			if _, _, err := c.ReadMessage(); err != nil {
				t.Fatalf("reading the welcome: %v", err)
			}
			for _, m := range sent {
				if err := c.WriteMessage(websocket.BinaryMessage, m); err != nil {
					t.Fatal(err)
				}
				if _, _, err := c.ReadMessage(); err != nil {
					t.Fatalf("reading the echo: %v", err)
				}
				wantBytes += int64(len(m))
			}
			// counted while the session is open: the echo is in once received
			want := map[[2]string]servedCount{{listener, "/ws"}: {Requests: 1, Bytes: wantBytes}}
			for _, d := range servedDiff(t, s, observer, before, want) {
				t.Error(d)
			}
			closing := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "done")
			if err := c.WriteControl(websocket.CloseMessage, closing, time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.Fatalf("after close: %v, want the close echoed", err)
			}
			// the close moves nothing: it is not a message
			for _, d := range servedDiff(t, s, observer, before, want) {
				t.Error(d)
			}
		})
	}
}

// routePaths are the paths of routes, in order: /debug/served's keys.
func routePaths() []string {
	var out []string
	for _, rt := range routes {
		out = append(out, rt.path)
	}
	return out
}

// servedSnapshot is every cell's requests and bytes, for in-process tests
// that compare two readings.
type servedSnapshot [numListeners][len(routes)][2]int64

func (c *servedCounters) snapshot() servedSnapshot {
	var out servedSnapshot
	for l := range c {
		for rt := range c[l] {
			out[l][rt] = [2]int64{c[l][rt].requests.Load(), c[l][rt].bytes.Load()}
		}
	}
	return out
}
