package load

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.k6.io/k6/v2/lib"
)

// h1Conn is an HTTP/1.1 connection: one request at a time, as wrk and k6/http send them
// (no pipelining).
type h1Conn struct {
	conn   net.Conn
	br     *bufio.Reader
	dl     deadline
	body   bodyCheck // the answer's body against plan.expect, reused from answer to answer
	served int       // answers read on it
	bufs   net.Buffers
}

// h1Request is the request's head every iteration of the loop writes: built once, as a native
// client does. The headers are k6/http's for a request without params: Host, User-Agent, and
// an upload's Content-Type and Content-Length.
func h1Request(p *plan, userAgent string) []byte {
	var b strings.Builder
	b.WriteString(p.method + " " + p.requestURI() + " HTTP/1.1\r\nHost: " + p.authority() + "\r\n")
	if userAgent != "" {
		b.WriteString("User-Agent: " + userAgent + "\r\n")
	}
	if p.uploading() {
		b.WriteString("Content-Type: application/octet-stream\r\nContent-Length: " + strconv.Itoa(p.UploadBytes) + "\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

// write sends the request: its head, then an upload's body, n bytes of up written from its run
// of repeats (never built whole), all in one writev where the connection takes one (cleartext).
func (h *h1Conn) write(req []byte, up content, n int) error {
	if up.want == nil {
		_, err := h.conn.Write(req)
		return err
	}
	h.bufs = append(h.bufs[:0], req)
	for off := 0; off < n; {
		piece := up.from(off)
		piece = piece[:min(len(piece), n-off)]
		h.bufs = append(h.bufs, piece)
		off += len(piece)
	}
	bufs := h.bufs // WriteTo consumes its receiver: h.bufs keeps the array for the next
	_, err := bufs.WriteTo(h.conn)
	return err
}

// runH1 sends the request, reads and verifies the answer, and again, until the deadline.
func (c *Client) runH1(ctx context.Context, state *lib.State, rec *recorder, until time.Time) {
	req := h1Request(c.p, state.Options.UserAgent.String)
	for {
		now := time.Now()
		if !now.Before(until) || ctx.Err() != nil {
			return
		}
		o, retry := c.h1Once(ctx, state, rec, req, now)
		if retry {
			// the server closed a kept-alive connection before this request reached it, as
			// it may at any time (RFC 9112 9.6): send it again on a new one, as k6/http does
			o, _ = c.h1Once(ctx, state, rec, req, time.Now())
		}
		if ctx.Err() != nil {
			return // cut off by the end of the test: not a request that failed
		}
		rec.done(o)
		if o.err != nil {
			return
		}
	}
}

// h1Once sends one request, on the open connection or a new one. retry says it failed before
// any byte of an answer on a connection that had already served one: nothing was measured.
func (c *Client) h1Once(ctx context.Context, state *lib.State, rec *recorder, req []byte, now time.Time) (o outcome, retry bool) {
	if c.h1 == nil {
		conn, err := c.connect(ctx, state, rec, nil)
		if err != nil {
			return outcome{start: now, end: time.Now(), err: err}, false
		}
		c.h1 = &h1Conn{
			conn: conn, br: bufio.NewReaderSize(conn, 32<<10), dl: deadline{conn: conn, timeout: c.p.timeout},
			body: bodyCheck{content: c.p.expect},
		}
		now = time.Now()
	}
	h := c.h1
	if h.dl.due(now) {
		h.dl.set(now, now) // one request at a time: this one is the oldest
	}
	o.start = now
	err := h.write(req, c.p.upload, c.p.UploadBytes)
	if err == nil {
		// Let the other VUs' loops run before reading: by the time this one reads, its answer
		// has mostly arrived, and the read that would find nothing (one more system call,
		// and a trip through the poller) is saved.
		runtime.Gosched()
		_, err = h.br.Peek(1)
	}
	if err != nil {
		stale := h.served > 0 && isClosed(err)
		c.drop()
		o.end, o.err = time.Now(), err
		return o, stale
	}
	o.firstByte = time.Now()
	a, err := readAnswer(h.br, &h.body)
	o.end = time.Now()
	o.status, o.proto, o.bytes = a.status, a.proto, a.bytes
	o.differs, o.differsAt = h.body.differs, h.body.differsAt
	if err != nil {
		c.drop()
		o.status, o.proto, o.err = 0, "", err
		return o, false
	}
	h.served++
	if a.close {
		c.drop()
	}
	return o, false
}

// isClosed is the error of a connection the server had closed: EOF, or a reset.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
