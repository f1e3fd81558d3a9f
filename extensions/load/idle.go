package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"go.k6.io/k6/v2/lib/netext"
	"golang.org/x/net/http2"
)

// Why a connection the plan counted on is not held: the why tag of connections_lost.
const (
	lostRefused  = "refused"  // the dial was refused
	lostReset    = "reset"    // reset or closed before its first answer
	lostTimeout  = "timeout"  // not connected, or not answered, within the request timeout
	lostTLS      = "tls"      // the TLS handshake failed
	lostAnswer   = "answer"   // answered, but not as every answer must be (status, body, protocol)
	lostUnopened = "unopened" // not tried before the call's end
	lostClosed   = "closed"   // held, then closed by the server (or told to go: GOAWAY)
	lostOther    = "other"
)

// idleConn is a connection idle() holds: nothing is read or written on it until held().
type idleConn struct {
	conn net.Conn
	mux  bool // HTTP/2: frames may arrive on it that are no reason to drop it
}

// Idle opens n connections, one after another until the wall clock reaches until (ms since the
// Unix epoch), and keeps them open. Each first carries the plan's GET, checked and recorded as
// any request is, so that the server has accepted the connection and served on it, not only
// let the kernel complete its handshake; each is opened within the plan's timeout. The first
// answered becomes the client's own connection (as run() keeps one: run() and open() send on
// it); the others are held, nothing read or written, until held(). A connection not held, and
// the connections not tried before until, count in connections_lost{why}.
//
// What a connection costs the client while held is its socket and, over TLS, the cipher
// state: the buffers of its first request are shared, so that thousands stay cheap.
func (c *Client) Idle(n int, until float64) (Result, error) {
	if n < 0 {
		return Result{}, fmt.Errorf("idle: %d connections: 0 or more", n)
	}
	if c.p.uploading() {
		return Result{}, fmt.Errorf("idle: %w", errUploadRunOnly)
	}
	k, err := c.begin("idle", until)
	if err != nil {
		return Result{}, err
	}
	defer k.stop()
	ctx, state, rec, deadline := k.ctx, k.state, k.rec, k.deadline
	// the client's own connection, if it has one, is kept apart while the others open: each
	// opening takes conn's place
	c.mu.Lock()
	own := ownConn{conn: c.conn, h1: c.h1, h2: c.h2}
	c.conn, c.h1, c.h2 = nil, nil, nil
	c.mu.Unlock()
	c.times, c.idling = &dialTimes{}, true
	defer func() { c.times, c.idling = nil, false }()
	ua := state.Options.UserAgent.String
	req, block := h1Request(c.p, ua), h2Headers(c.p, ua)
	br := bufio.NewReaderSize(nil, 32<<10) // every first answer is read through it, in turn
	tried := 0
	for tried < n && time.Now().Before(deadline) && ctx.Err() == nil {
		tried++
		o := c.idleOnce(ctx, br, req, block, rec)
		if ctx.Err() != nil {
			c.drop()
			tried-- // cut off by the end of the test: not tried, not a request that failed
			break
		}
		rec.done(o)
		if why := c.lostOf(o); why != "" {
			rec.lost(why, 1)
			c.drop()
			continue
		}
		// no deadline left from its first request: the connection waits, however long
		_ = c.conn.SetDeadline(time.Time{})
		c.mu.Lock()
		if own.conn == nil {
			own = c.owned()
		} else {
			c.idle = append(c.idle, idleConn{conn: c.conn, mux: c.h2 != nil})
		}
		c.conn, c.h1, c.h2 = nil, nil, nil
		c.mu.Unlock()
	}
	rec.lost(lostUnopened, n-tried)
	c.mu.Lock()
	c.conn, c.h1, c.h2 = own.conn, own.h1, own.h2
	c.mu.Unlock()
	return k.result(), nil
}

// ownConn is the client's own connection and its protocol's state.
type ownConn struct {
	conn net.Conn
	h1   *h1Conn
	h2   *h2Conn
}

// owned is the connection just opened, made the client's own: over HTTP/1.1 with the reader
// run() reads through (its first answer read through idle()'s, which held nothing after it).
// Called with c.mu held.
func (c *Client) owned() ownConn {
	o := ownConn{conn: c.conn, h2: c.h2}
	if o.h2 == nil {
		o.h1 = &h1Conn{
			conn: c.conn, br: bufio.NewReaderSize(c.conn, 32<<10), dl: deadline{conn: c.conn, timeout: c.p.timeout},
			body: bodyCheck{content: c.p.expect}, served: 1,
		}
	}
	return o
}

// idleOnce opens one connection and sends the plan's GET on it, all within the plan's timeout.
func (c *Client) idleOnce(ctx context.Context, br *bufio.Reader, req, block []byte, rec *recorder) outcome {
	ctx, cancel := context.WithTimeout(ctx, c.p.timeout)
	defer cancel()
	state := c.vu.State()
	if c.p.Proto == "h2" {
		o := c.freshH2(ctx, state, rec, block)
		if c.h2 != nil {
			c.h2.take() // the stream ended: off the connection, which open() or run() may go on with
		}
		return o
	}
	o := c.freshH1(ctx, state, rec, br, req)
	br.Reset(nil) // not the connection's: it is held with nothing read
	return o
}

// lostOf is why a connection just opened is not kept: how its first request failed, or its
// answer was wrong; "" when it is kept.
func (c *Client) lostOf(o outcome) string {
	if o.err == nil {
		if c.p.check(o).pass() {
			return ""
		}
		return lostAnswer
	}
	var ne net.Error
	switch err := o.err; {
	case errors.Is(err, syscall.ECONNREFUSED):
		return lostRefused
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return lostTimeout
	case isClosed(err):
		return lostReset
	case errors.Is(err, errHandshake):
		return lostTLS
	}
	return lostOther
}

// Holding is what held() returns to the script.
type Holding struct {
	Held int `js:"held"` // connections the server still kept open
	Lost int `js:"lost"` // closed by it since
}

// Held tells which of the client's connections (its own and those idle() holds) the server
// still keeps open, without waiting on any, counts them in connections_held and the others in
// connections_lost{why:closed}, then closes them all.
func (c *Client) Held() (Holding, error) {
	k, err := c.begin("held", float64(time.Now().UnixMilli()))
	if err != nil {
		return Holding{}, err
	}
	defer k.stop()
	c.mu.Lock()
	held := c.idle
	c.idle = nil
	own := ownConn{conn: c.conn, h1: c.h1, h2: c.h2}
	c.mu.Unlock()
	var h Holding
	count := func(open bool) {
		if open {
			h.Held++
		} else {
			h.Lost++
		}
	}
	if own.conn != nil {
		count(own.open())
	}
	for _, ic := range held {
		count(ic.open())
		_ = ic.conn.Close()
	}
	c.drop()
	k.rec.held(h.Held)
	k.rec.lost(lostClosed, h.Lost)
	k.rec.flush(time.Now())
	return h, nil
}

// open tells whether the client's own connection is still open: a reader (the open model's)
// has seen it fail or be told to go, or else as an idle connection.
func (o ownConn) open() bool {
	if o.h1 != nil && o.h1.br.Buffered() > 0 {
		return false // bytes no request asked for
	}
	if o.h2 != nil && o.h2.reader != nil {
		r := o.h2.reader
		select {
		case err := <-r.err:
			r.err <- err // still the reader's last value, for whoever reads it next
			return false
		default:
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		return !o.h2.goAway
	}
	return idleConn{conn: o.conn, mux: o.h2 != nil}.open()
}

// open tells whether the server still keeps the connection open. The socket is peeked without
// waiting: nothing to read, it is open; closed or reset, it is not. Bytes waiting are read
// (within a few ms): over TLS they may be a message of the TLS layer itself (a session
// ticket), over HTTP/2 frames that are no reason to drop it (a PING, a SETTINGS
// acknowledgement); a GOAWAY, an alert, the connection's end, or over HTTP/1.1 any answer no
// request asked for, and it is not.
func (ic idleConn) open() bool {
	switch peek(ic.conn) {
	case peekIdle:
		return true
	case peekClosed:
		return false
	}
	_ = ic.conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if ic.mux {
		fr := http2.NewFramer(nil, bufio.NewReaderSize(ic.conn, 4<<10))
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return errors.Is(err, os.ErrDeadlineExceeded)
			}
			if _, ok := f.(*http2.GoAwayFrame); ok {
				return false
			}
		}
	}
	var b [1]byte
	_, err := ic.conn.Read(b[:])
	return errors.Is(err, os.ErrDeadlineExceeded) // what TLS read was its own; any byte is not
}

// What a peek at a socket found.
type peekState int

const (
	peekIdle   peekState = iota // nothing to read: open
	peekData                    // bytes to read
	peekClosed                  // the peer closed it, or it was reset
)

// peek looks at conn's socket without reading or waiting (MSG_PEEK | MSG_DONTWAIT). A
// connection whose socket it cannot reach is peekData: read to tell.
func peek(conn net.Conn) peekState {
	tcp := tcpOf(conn)
	if tcp == nil {
		return peekData
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		return peekClosed
	}
	st := peekClosed
	var b [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0:
			st = peekData
		case errors.Is(err, syscall.EAGAIN):
			st = peekIdle
		}
		return true // never wait for the socket to be readable
	})
	if err != nil {
		return peekClosed
	}
	return st
}

// tcpOf is the TCP connection under conn's layers (TLS, k6's byte counters, the h2 loop's
// buffer), nil when there is none.
func tcpOf(conn net.Conn) *net.TCPConn {
	for {
		switch c := conn.(type) {
		case *net.TCPConn:
			return c
		case *tls.Conn:
			conn = c.NetConn()
		case *netext.Conn:
			conn = c.Conn
		case *readBuffered:
			conn = c.Conn
		default:
			return nil
		}
	}
}
