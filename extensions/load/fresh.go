package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"go.k6.io/k6/v2/lib"
	"golang.org/x/net/http2"
)

// Fresh sends n requests, one at a time, each on a connection of its own, as k6/http does with
// noConnectionReuse: the connection dialled (the handshakes timed as http_req_connecting and
// http_req_tls_handshaking), over TLS the certificate verified, one GET (h1: with "Connection:
// close", as Go's client sends it with keep-alive off; h2: one stream), its answer checked, the
// connection closed. It returns when n requests have ended or the wall clock reaches until (ms
// since the Unix epoch). A connection that fails fails its request and the next one dials
// anew. This is the fresh-* pattern without k6/http's cost per request: most of a fresh
// request's client CPU in k6 is net/http's machinery and the JavaScript around it, not the
// handshake.
func (c *Client) Fresh(n int, until float64) (Result, error) {
	if n < 0 {
		return Result{}, fmt.Errorf("fresh: %d requests: 0 or more", n)
	}
	if c.p.uploading() {
		return Result{}, fmt.Errorf("fresh: %w", errUploadRunOnly)
	}
	k, err := c.begin("fresh", until)
	if err != nil {
		return Result{}, err
	}
	defer k.stop()
	ctx, state, rec, deadline := k.ctx, k.state, k.rec, k.deadline
	c.drop() // a connection kept by run() is not a fresh one
	c.times = &dialTimes{}
	defer func() { c.times = nil }()
	if c.fresh == nil {
		// built once per VU: a script calls fresh() for a few requests at a time
		ua := state.Options.UserAgent.String
		c.fresh = &freshParts{h1: h1FreshRequest(c.p, ua), h2: h2Headers(c.p, ua), br: bufio.NewReaderSize(nil, 32<<10)}
	}
	h1req, block, br := c.fresh.h1, c.fresh.h2, c.fresh.br
	for range n {
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			break
		}
		var o outcome
		if c.p.Proto == "h2" {
			o = c.freshH2(ctx, state, rec, block)
		} else {
			o = c.freshH1(ctx, state, rec, br, h1req)
		}
		c.drop()
		if ctx.Err() != nil {
			break // cut off by the end of the test: not a request that failed
		}
		rec.done(o)
	}
	return k.result(), nil
}

// freshParts are what every fresh request of a VU reuses: the request (h1) or header block
// (h2), and the reader of its answers.
type freshParts struct {
	h1, h2 []byte
	br     *bufio.Reader
}

// h1FreshRequest is h1Request asking the server to close the connection after its answer.
func h1FreshRequest(p *plan, userAgent string) []byte {
	req := h1Request(p, userAgent)
	return append(req[:len(req)-2:len(req)-2], "Connection: close\r\n\r\n"...)
}

// freshH1 dials, sends req and reads its answer through br.
func (c *Client) freshH1(ctx context.Context, state *lib.State, rec *recorder, br *bufio.Reader, req []byte) outcome {
	start := time.Now()
	conn, err := c.connect(ctx, state, rec, nil)
	if err != nil {
		return outcome{start: start, end: time.Now(), err: err}
	}
	o := outcome{dial: *c.times, dialled: true, dialStart: start, start: time.Now()}
	_ = conn.SetDeadline(o.start.Add(c.p.timeout))
	br.Reset(conn)
	if _, err = conn.Write(req); err == nil {
		_, err = br.Peek(1)
	}
	if err != nil {
		o.end, o.err = time.Now(), err
		return o
	}
	o.firstByte = time.Now()
	body := bodyCheck{content: c.p.expect}
	a, err := readAnswer(br, &body)
	o.end = time.Now()
	if err != nil {
		o.err = err
		return o
	}
	o.status, o.proto, o.bytes = a.status, a.proto, a.bytes
	o.differs, o.differsAt = body.differs, body.differsAt
	return o
}

// freshH2 opens a connection (preface and SETTINGS exchanged, as openH2 always does), sends
// one stream on it and reads it to its end. The request is timed from its HEADERS, as k6/http
// times it after the handshakes; conn_ttfb, from the dial, has the SETTINGS exchange too.
func (c *Client) freshH2(ctx context.Context, state *lib.State, rec *recorder, block []byte) outcome {
	start := time.Now()
	h, err := c.openH2(ctx, state, rec)
	if err != nil {
		return outcome{start: start, end: time.Now(), err: err}
	}
	const id = 1
	s := &h2Stream{o: outcome{dial: *c.times, dialled: true, dialStart: start, start: time.Now()}, body: bodyCheck{content: c.p.expect}}
	h.streams[id] = s
	h.nextID = id + 2
	_ = h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: true, EndHeaders: true})
	for s.o.end.IsZero() {
		if h.streams[id] == nil { // a GOAWAY before the stream: the server never took it
			s.o.end, s.o.err = time.Now(), errors.New("h2: the server sent GOAWAY before its first stream")
			return s.o
		}
		if err := h.step(time.Now()); err != nil {
			s.o.end, s.o.status, s.o.err = time.Now(), 0, err
			return s.o
		}
	}
	if s.o.err == nil {
		s.o.proto = "HTTP/2.0"
	}
	return s.o
}
