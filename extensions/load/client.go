package load

import (
	"context"
	"fmt"
	"math"
	"net"
	"sync"
	"time"

	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/lib"
)

// Client is one VU's native load loop: one connection, kept from run() to run() (so from the
// warm-up to the measured scenario, as k6/http keeps a VU's connection), sending the plan's
// GET over and over.
type Client struct {
	vu     modules.VU
	custom customMetrics
	p      *plan

	mu   sync.Mutex // guards conn against the context's end, which closes it
	conn net.Conn   // the open connection (h1 or h2), nil between connections
	h1   *h1Conn
	h2   *h2Conn

	warned bool // the server's stream limit was said

	tcp   *tcpDialer  // made by the first dial (dialerFor)
	times *dialTimes  // set by the fresh loop: the handshakes of the connection dialled last
	sched schedule    // the open model's last schedule (open.go)
	fresh *freshParts // the fresh loop's request and reader, made by its first call

	idle   []idleConn // connections idle() holds besides conn, nothing read or written (idle.go)
	idling bool       // idle() is opening: an h2 connection gets small buffers (openH2)
}

// Result is what run() returns to the script: this call's totals.
type Result struct {
	Requests    int `js:"requests"`    // requests that ended (answered or failed)
	Failed      int `js:"failed"`      // without a 2xx/3xx answer
	Late        int `js:"late"`        // ended after until
	Connections int `js:"connections"` // connections opened
}

// Run sends requests until the wall clock reaches until (ms since the Unix epoch, as
// Date.now() and exec.scenario.startTime count), then waits for those in flight and returns.
// A connection that fails ends the call after recording the request it failed; the next call
// opens a new one. Requests cut off by the end of the test (the iteration's context) are not
// recorded, as k6/http records none.
func (c *Client) Run(until float64) (Result, error) {
	k, err := c.begin("run", until)
	if err != nil {
		return Result{}, err
	}
	defer k.stop()
	ctx, state, rec, deadline := k.ctx, k.state, k.rec, k.deadline
	if c.p.Proto == "h2" {
		c.runH2(ctx, state, rec, deadline)
	} else {
		c.runH1(ctx, state, rec, deadline)
	}
	if ctx.Err() != nil {
		// abort closed the connection (or is about to): the next call, if any, opens anew
		c.drop()
	} else if c.conn != nil {
		// the deadline came with the connection serving: one the plan counted on, held to the
		// end (a connection the server never answered is cut off by the context instead)
		rec.held(1)
	}
	return k.result(), nil
}

// call is one call of run(), fresh() or open(): the VU's state and context, its deadline, the
// recorder of its samples, and the stop of the hook that closes the connection when the
// context ends.
type call struct {
	state    *lib.State
	ctx      context.Context
	deadline time.Time
	rec      *recorder
	stop     func() bool
}

// begin starts a call of the script's function name that ends at until (ms since the Unix
// epoch).
func (c *Client) begin(name string, until float64) (*call, error) {
	state := c.vu.State()
	if state == nil {
		return nil, fmt.Errorf("%s: call it from a VU's iteration (default function), not the init context", name)
	}
	ctx := c.vu.Context()
	deadline := epochMs(until)
	return &call{
		state: state, ctx: ctx, deadline: deadline,
		rec: newRecorder(ctx, state, c.custom, c.p, deadline), stop: context.AfterFunc(ctx, c.abort),
	}, nil
}

// result hands the call's last samples to k6 and returns its totals to the script.
func (k *call) result() Result {
	k.rec.flush(time.Now())
	return Result{Requests: k.rec.requests, Failed: k.rec.failed, Late: k.rec.late, Connections: k.rec.conns}
}

// epochMs is the time v ms after the Unix epoch (as Date.now() counts), to the nanosecond: the
// whole milliseconds are taken apart from the fraction, which a float64 of nanoseconds since
// 1970 would round to 256 ns, enough to move a due time across a deadline.
func epochMs(v float64) time.Time {
	whole := math.Floor(v)
	return time.UnixMilli(int64(whole)).Add(time.Duration((v - whole) * float64(time.Millisecond)))
}

// connect dials a new connection and makes it the one abort closes.
func (c *Client) connect(ctx context.Context, state *lib.State, rec *recorder, under func(net.Conn) net.Conn) (net.Conn, error) {
	td, err := c.dialerFor(state)
	if err != nil {
		return nil, err
	}
	conn, err := dial(ctx, state, td, c.p, under, c.times)
	if err != nil {
		return nil, err
	}
	rec.connected()
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	if ctx.Err() != nil { // ended while dialling: abort ran before conn was set
		c.drop()
		return nil, ctx.Err()
	}
	return conn, nil
}

// drop closes the open connection, if any.
func (c *Client) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
	c.h1, c.h2 = nil, nil
}

// abort unblocks a loop waiting on the network when the iteration's context ends.
func (c *Client) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// deadline bounds a connection's reads and writes by the oldest request in flight on it: a
// request without an answer fails timeout after it was sent, however busy other streams keep
// the connection. It is moved at most every quarter of the timeout (so such a request fails
// after 3/4 to 4/4 of it), a timer change per quarter instead of one per request or frame.
type deadline struct {
	conn    net.Conn
	timeout time.Duration
	moved   time.Time
}

// due tells whether the deadline is to be moved now.
func (d *deadline) due(now time.Time) bool {
	return now.Sub(d.moved) >= d.timeout/4
}

// set moves the deadline to timeout after oldest, the start of the oldest request in flight.
func (d *deadline) set(now, oldest time.Time) {
	d.moved = now
	_ = d.conn.SetDeadline(oldest.Add(d.timeout))
}
