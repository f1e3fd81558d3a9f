package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzParseInts checks parseInts against a plain reading of the query: on
// success every value is the one given, or the default, and in range; on
// failure the message names the parameter (or the malformed query) and stays
// short whatever the client sent.
func FuzzParseInts(f *testing.F) {
	f.Fuzz(func(t *testing.T, rawQuery string) {
		for _, ps := range [][]intParam{streamParams[:], sseParams[:], bytesParams[:]} {
			got := make([]int, len(ps))
			err := parseInts(rawQuery, ps, got)
			wantErr := wantParseError(rawQuery, ps)
			if err != nil {
				if wantErr == "" {
					t.Fatalf("parseInts(%q) = %v, want no error", rawQuery, err)
				}
				if !strings.Contains(err.Error(), wantErr) {
					t.Fatalf("parseInts(%q) = %v, want it to name %q", rawQuery, err, wantErr)
				}
				// an answer to bad input does not grow with the input
				if len(err.Error()) > maxErrorMessage {
					t.Fatalf("parseInts(%q): message of %d bytes, want at most %d", rawQuery, len(err.Error()), maxErrorMessage)
				}
				continue
			}
			if wantErr != "" {
				t.Fatalf("parseInts(%q) succeeded, want an error naming %q", rawQuery, wantErr)
			}
			q, _ := url.ParseQuery(rawQuery)
			for i, p := range ps {
				want := p.def
				if vs, ok := q[p.name]; ok {
					want, _ = strconv.Atoi(vs[0])
				}
				if got[i] != want || got[i] < p.min || got[i] > p.max {
					t.Fatalf("parseInts(%q): %s = %d, want %d in %d..%d", rawQuery, p.name, got[i], want, p.min, p.max)
				}
			}
		}
	})
}

// maxErrorMessage bounds a 400's message: a fixed sentence, a parameter
// name, its range and at most maxEcho bytes of the client's value, quoted
// (%q writes a byte as up to 4, a rune as up to 10).
const maxErrorMessage = 128 + 10*maxEcho

// wantParseError is what parseInts' error must contain for rawQuery: the
// first parameter of ps that is repeated or not an integer in range, "" when
// the query is fine.
func wantParseError(rawQuery string, ps []intParam) string {
	if rawQuery == "" {
		return ""
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "malformed query string"
	}
	for _, p := range ps {
		vs, ok := q[p.name]
		if !ok {
			continue
		}
		if len(vs) != 1 {
			return p.name + " given"
		}
		if n, err := strconv.Atoi(vs[0]); err != nil || n < p.min || n > p.max {
			return p.name + " must be an integer"
		}
	}
	return ""
}

// fuzzUploadLimit is small so that the fuzzer reaches 413 with small bodies.
const fuzzUploadLimit = 1024

// fuzzDeadline is how long one request may run: /sse and /stream can be
// asked for minutes, the fuzz target stops them as a client would by going
// away. fuzzBudget is how much body the fuzz "client" takes before it goes
// away: a /stream can be asked for 10 GiB.
const (
	fuzzDeadline = 50 * time.Millisecond
	fuzzBudget   = 1 << 20
	// fuzzHang is how long the handler may take to return once its client
	// is gone: far above what a stream needs to notice.
	fuzzHang = 5 * time.Second
)

// maxStaticBody bounds every answer but a 200 /stream or /sse: the largest
// fixed body is / (4096 bytes); every error is a line of text quoting at
// most maxEcho bytes of what the client sent.
const maxStaticBody = RootBodySize

// maxTickBytes bounds one /sse event: `event: tick`, then
// `data: {"seq":<5 digits>,"ts":<13 to 14 digits>}` and a blank line.
const maxTickBytes = 64

// FuzzHandler sends one HTTP/1.1 request, parsed by net/http's own request
// reader (Content-Length and Transfer-Encoding included), through the
// server's handler: no panic, no 5xx, only the statuses the route may answer,
// a body no larger than the route's bound, and a handler that returns once
// its client is gone. A /ws request that upgrades gets the bytes after the
// request as WebSocket frames.
func FuzzHandler(f *testing.F) {
	s := NewHandler(fuzzUploadLimit)
	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte) {
		var raw bytes.Buffer
		raw.WriteString(method + " " + target + " HTTP/1.1\r\nHost: " + testHost + "\r\n")
		for h := range strings.SplitSeq(headers, "\n") {
			if h != "" {
				raw.WriteString(h + "\r\n")
			}
		}
		raw.WriteString("\r\n")
		raw.Write(body)
		br := bufio.NewReader(&raw)
		req, err := http.ReadRequest(br)
		if err != nil {
			// net/http's server answers these itself (400, 431, 501 for a
			// Transfer-Encoding it does not know), before any handler:
			// TestBadRequestLine covers them on a real listener.
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzDeadline)
		defer cancel()
		w := &fuzzWriter{header: http.Header{}, gone: cancel, rest: br}
		before := s.served.snapshot()
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.ServeHTTP(w, req.WithContext(ctx))
		}()
		select {
		case <-done:
		case <-time.After(fuzzHang):
			t.Fatalf("%s %q: handler still running %s after its request began", method, target, fuzzHang)
		}
		w.wsDone.Wait()

		path := req.URL.Path
		checkServed(t, before, s.served.snapshot(), req, w)
		if w.hijacked.Load() {
			if path != "/ws" {
				t.Fatalf("%s %q: hijacked, only /ws may", method, target)
			}
			// the 101, the welcome, then at most the echo of what was sent
			// (a frame is echoed at most once, with a header no longer than
			// the client's) and a close frame
			if n, limit := w.wsOut.Load(), int64(1024+2*len(body)); n > limit {
				t.Fatalf("/ws: %d bytes out for %d in, want at most %d", n, len(body), limit)
			}
			return
		}
		status := w.status
		if status == 0 {
			status = http.StatusOK // nothing written: net/http sends 200
		}
		allowed := allowedStatuses(path, req.Method)
		if !strings.Contains(allowed, " "+strconv.Itoa(status)+" ") {
			t.Fatalf("%s %q: status %d, want one of%s", method, target, status, allowed)
		}
		var limit int64 = maxStaticBody
		if status == http.StatusOK {
			switch path {
			case "/stream":
				var v [len(streamParams)]int
				_ = parseInts(req.URL.RawQuery, streamParams[:], v[:])
				limit = int64(v[0]) * int64(v[1])
				// Not cut by the fuzz client or the deadline: exactly what
				// was asked.
				if !w.over && ctx.Err() == nil && w.n != limit {
					t.Fatalf("%q: %d bytes, asked for %d", target, w.n, limit)
				}
			case "/bytes":
				var v [len(bytesParams)]int
				_ = parseInts(req.URL.RawQuery, bytesParams[:], v[:])
				limit = int64(v[0])
				// exactly what was asked, unless the fuzz client went away first
				if !w.over && w.n != limit {
					t.Fatalf("%q: %d bytes, asked for %d", target, w.n, limit)
				}
			case "/sse":
				var v [len(sseParams)]int
				_ = parseInts(req.URL.RawQuery, sseParams[:], v[:])
				limit = int64(v[0]) * maxTickBytes
			}
		}
		if w.n > limit {
			t.Fatalf("%s %q: status %d with %d bytes, want at most %d", method, target, status, w.n, limit)
		}
	})
}

// allowedStatuses lists, space-separated and padded, what each route may
// answer: 200 for a good request, 400 for bad parameters or an unreadable
// upload body or a plain GET /ws, 405 for a method a route does not take, 413
// for an upload over the limit, 404 for anything else. Never a 5xx: nothing
// a client sends is the server's error.
func allowedStatuses(path, method string) string {
	switch path {
	case "/", "/json", "/healthz", "/debug/conns", "/debug/served":
		return " 200 "
	case "/upload":
		if method != http.MethodPost && method != http.MethodPut {
			return " 405 "
		}
		return " 200 400 413 "
	case "/stream", "/sse":
		return " 200 400 "
	case "/bytes":
		if method != http.MethodGet && method != http.MethodHead {
			return " 405 "
		}
		return " 200 400 "
	case "/ws":
		// 405: an upgrade asked with a method other than GET
		return " 400 405 "
	}
	return " 404 "
}

// checkServed: a request on a counted route moves its h1c cell (the fuzz
// request has no TLS) by one answer and the body bytes the writer took (none
// for HEAD); a WebSocket session by at most one and at most what it sent; any
// other request moves nothing.
func checkServed(t *testing.T, before, after servedSnapshot, req *http.Request, w *fuzzWriter) {
	t.Helper()
	want := before
	if route := slices.Index(routePaths(), req.URL.Path); route >= 0 {
		cell := &want[listenerH1C][route]
		switch {
		case w.hijacked.Load():
			got := after[listenerH1C][route]
			if d := got[0] - cell[0]; d > 1 || got[1]-cell[1] > w.wsOut.Load() || (d == 0 && got[1] != cell[1]) {
				t.Fatalf("/ws session: served moved by %d requests, %d bytes, for %d bytes sent",
					d, got[1]-cell[1], w.wsOut.Load())
			}
			*cell = got
		case req.Method == http.MethodHead:
			cell[0]++
		default:
			cell[0]++
			cell[1] += w.n
		}
	}
	if after != want {
		t.Fatalf("%s %q (%d body bytes written): served counters moved from %v to %v, want %v",
			req.Method, req.URL, w.n, before, after, want)
	}
}

var errFuzzClientGone = errors.New("fuzz client went away")

// fuzzWriter is an http.ResponseWriter that counts the body instead of
// keeping it, and goes away (cancelling the request, failing writes) after
// fuzzBudget bytes. Hijack hands /ws one end of a pipe: the other end sends
// rest, the bytes after the request, then waits for the request's deadline,
// and counts what the server writes.
type fuzzWriter struct {
	header http.Header
	status int
	n      int64
	gone   context.CancelFunc
	over   bool // the writer went away: the body is cut
	rest   io.Reader

	hijacked atomic.Bool
	wsOut    atomic.Int64
	wsDone   sync.WaitGroup
}

func (w *fuzzWriter) Header() http.Header { return w.header }

func (w *fuzzWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *fuzzWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.n >= fuzzBudget {
		w.over = true
		w.gone()
		return 0, errFuzzClientGone
	}
	w.n += int64(len(p))
	return len(p), nil
}

func (w *fuzzWriter) Flush() {}

func (w *fuzzWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked.Store(true)
	server, client := net.Pipe()
	w.wsDone.Go(func() {
		var out countWriter
		read := make(chan struct{})
		go func() {
			_, _ = io.Copy(&out, client) // until the server closes
			w.wsOut.Store(out.n)
			close(read)
		}()
		_, _ = io.Copy(client, w.rest)
		// Then the client idles: the server's echo loop has no deadline, so
		// the "client" goes away at the request's.
		select {
		case <-read:
		case <-time.After(fuzzDeadline):
		}
		_ = client.Close()
		<-read
	})
	return server, bufio.NewReadWriter(bufio.NewReader(server), bufio.NewWriter(server)), nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
