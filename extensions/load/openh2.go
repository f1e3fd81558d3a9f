package load

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.k6.io/k6/v2/lib"
	"golang.org/x/net/http2"
)

// h2Reader reads an HTTP/2 connection of the open model in a goroutine of its own, so that the
// VU can write each request when it is due while answers arrive: the VU writes HEADERS and the
// reader handles frames under mu, and each stream that ends comes back on out, in order,
// before the connection's failure comes on err.
type h2Reader struct {
	mu  sync.Mutex   // the h2Conn's streams, flow control and writer
	out chan outcome // streams that ended
	err chan error   // the connection failed (or drop closed it): the reader's last value
}

// startReader reads h until its connection fails or is closed, handing back every stream that
// ends.
func startReader(h *h2Conn) *h2Reader {
	r := &h2Reader{out: make(chan outcome, 256), err: make(chan error, 1)}
	// it reads for as long as the schedule runs: not bound by the deadline of the dial's
	// handshake, or of an earlier call's streams (wake fails a stream past its timeout)
	_ = h.conn.SetReadDeadline(time.Time{})
	go func() {
		var ended []outcome
		for {
			f, err := h.read()
			if err == nil {
				r.mu.Lock()
				err = h.handle(f)
				ended = append(ended[:0], h.take()...)
				if err == nil && h.bw.Buffered() > 0 {
					// window updates, and acknowledgements of settings and pings
					if ferr := h.bw.Flush(); ferr != nil {
						err = fmt.Errorf("h2: write: %w", ferr)
					}
				}
				r.mu.Unlock()
				for _, o := range ended {
					r.out <- o
				}
			}
			if err != nil {
				r.err <- err
				return
			}
		}
	}()
	return r
}

// openH2 is one call of the HTTP/2 open model: its requests due and not yet sent, and those in
// flight (sent, their outcome not yet recorded).
type openH2 struct {
	c        *Client
	rec      *recorder
	block    []byte
	waiting  []time.Time // due times, oldest first
	blocked  int         // of waiting, those no stream was free for when they were due
	inFlight int
}

// runOpenH2 is runOpen over HTTP/2: each request leaves as a new stream on the VU's connection
// when it is due, whatever is in flight, up to the server's limit of concurrent streams. A
// request due while that limit is reached waits for a stream to end and counts in
// behind_schedule; its latency still runs from when it was due. It returns the due time of
// the next request it did not send.
func (c *Client) runOpenH2(ctx context.Context, state *lib.State, rec *recorder, due, until time.Time, interval time.Duration) time.Time {
	o := &openH2{c: c, rec: rec, block: h2Headers(c.p, state.Options.UserAgent.String)}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for ctx.Err() == nil {
		now := time.Now()
		for ; !due.After(now) && due.Before(until); due = due.Add(interval) {
			o.waiting = append(o.waiting, due)
		}
		h := c.h2
		if h != nil && h.reader == nil {
			h.reader = startReader(h) // opened by another call (idle()), read by the VU until now
		}
		if h == nil && len(o.waiting) > 0 {
			var err error
			if h, err = c.openH2(ctx, state, rec); err != nil {
				if ctx.Err() == nil {
					rec.done(outcome{start: o.waiting[0], end: time.Now(), err: err})
					o.pop()
				}
				continue
			}
			h.reader = startReader(h)
		}
		if h != nil {
			o.send(h)
		}
		if len(o.waiting) == 0 && o.inFlight == 0 && !due.Before(until) && !now.Before(until) {
			return due
		}
		timer.Reset(o.wake(h, due, until, now))
		var out <-chan outcome
		var failed <-chan error
		if h != nil {
			out, failed = h.reader.out, h.reader.err
		}
		select {
		case <-ctx.Done():
		case <-timer.C:
			continue
		case got := <-out:
			o.done(got)
		case err := <-failed:
			o.fail(h, err)
		}
		if !timer.Stop() {
			<-timer.C
		}
	}
	return due
}

// pop takes the oldest request waiting.
func (o *openH2) pop() time.Time {
	d := o.waiting[0]
	o.waiting = o.waiting[1:]
	if o.blocked > 0 {
		o.blocked--
	}
	return d
}

// send writes a stream for every request waiting while the server allows more in flight. A
// connection the server is closing (GOAWAY) or whose stream IDs are used up takes no more:
// the requests it refused wait again, and once nothing is in flight on it, it is dropped.
func (o *openH2) send(h *h2Conn) {
	r := h.reader
	r.mu.Lock()
	o.requeue(h)
	limit := 1 << 30
	if h.maxStreams >= 0 {
		limit = h.maxStreams
	}
	sent := false
	for len(o.waiting) > 0 && !h.goAway && len(h.streams) < limit && h.nextID < 1<<31 {
		late := o.blocked > 0
		d := o.pop()
		id := h.nextID
		h.nextID += 2
		_ = h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: o.block, EndStream: true, EndHeaders: true})
		h.streams[id] = &h2Stream{o: outcome{start: d}, body: bodyCheck{content: o.c.p.expect}}
		o.inFlight++
		o.rec.behind(late, time.Since(d))
		sent = true
	}
	var err error
	if sent {
		err = h.bw.Flush()
	}
	closing := len(h.streams) == 0 && (h.goAway || h.nextID >= 1<<31)
	r.mu.Unlock()
	// what is still waiting could not leave when it was due
	o.blocked = len(o.waiting)
	switch {
	case err != nil:
		_ = h.conn.SetReadDeadline(time.Now()) // the reader fails the streams in flight
	case closing:
		o.drain(h)
		o.c.drop()
	}
}

// requeue puts the requests a GOAWAY refused on h back among those waiting, as blocked: they
// could not be served when due. Called with h's reader's mu held.
func (o *openH2) requeue(h *h2Conn) {
	if len(h.refused) == 0 {
		return
	}
	o.inFlight -= len(h.refused)
	o.waiting = append(h.refused, o.waiting...)
	o.blocked += len(h.refused)
	slices.SortFunc(o.waiting, func(a, b time.Time) int { return a.Compare(b) })
	h.refused = nil
}

// wake is how long to sleep: until the next request is due or the schedule ends, or until the
// oldest stream in flight times out, when its connection is failed.
func (o *openH2) wake(h *h2Conn, due, until, now time.Time) time.Duration {
	wake := until
	if due.Before(until) {
		wake = due
	}
	if len(o.waiting) > 0 {
		wake = now.Add(o.c.p.timeout) // a stream's end wakes it first
	}
	if h != nil && o.inFlight > 0 {
		h.reader.mu.Lock()
		oldest := h.oldest(now)
		h.reader.mu.Unlock()
		if limit := oldest.Add(o.c.p.timeout); limit.Before(wake) {
			if !limit.After(now) {
				_ = h.conn.SetReadDeadline(now) // the reader fails every stream in flight
				return o.c.p.timeout
			}
			wake = limit
		}
	}
	return max(wake.Sub(now), 0)
}

// done records a stream that ended.
func (o *openH2) done(got outcome) {
	o.inFlight--
	o.rec.done(got)
}

// drain records the streams h's reader handed back and that were not yet recorded.
func (o *openH2) drain(h *h2Conn) {
	for {
		select {
		case got := <-h.reader.out:
			o.done(got)
		default:
			return
		}
	}
}

// fail records every stream still in flight on h as failed by err, and drops the connection;
// the requests waiting go out on a new one.
func (o *openH2) fail(h *h2Conn, err error) {
	o.drain(h) // the reader handed back every stream that ended before it failed
	h.reader.mu.Lock()
	o.requeue(h)
	for id, s := range h.streams {
		s.o.end, s.o.status, s.o.err = time.Now(), 0, err
		o.done(s.o)
		delete(h.streams, id)
	}
	h.reader.mu.Unlock()
	o.c.drop()
}
