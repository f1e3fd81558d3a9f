package load

import (
	"context"
	"fmt"
	"time"

	"go.k6.io/k6/v2/lib"
)

// Open is the open model of equal load, as wrk2 and Nighthawk run it: requests are due on a
// fixed schedule, one every 1/rate seconds from first (both ms since the Unix epoch, as
// Date.now() counts) until until, on the VU's kept-alive connection, whatever the server's
// latency. Each request's latency (http_req_duration, and http_req_waiting to its first byte)
// is measured from when it was due, not from when it could be sent, so a server that falls
// behind shows as latency instead of as fewer requests (no coordinated omission). A request due
// while the connection still carried the one before is counted in behind_schedule: the pool
// had no connection free for it. start_lag is how long after it was due each request left,
// the client's own timer slack included. Over HTTP/1.1 (h1c, h1) a connection carries one
// request at a time, so the pool's size is the plan's connections; over HTTP/2 (openh2.go) each
// request is a new stream on the VU's connection, up to the server's limit of streams in
// flight.
func (c *Client) Open(first, until, rate float64) (Result, error) {
	if !(rate > 0) {
		return Result{}, fmt.Errorf("open: rate %v: requests a second on this connection, more than 0", rate)
	}
	if c.p.uploading() {
		return Result{}, fmt.Errorf("open: %w", errUploadRunOnly)
	}
	k, err := c.begin("open", until)
	if err != nil {
		return Result{}, err
	}
	defer k.stop()
	ctx, state, rec, deadline := k.ctx, k.state, k.rec, k.deadline
	// k6 calls the iteration again if it returns before its scenario ends by k6's clock: the
	// same schedule resumes where it stopped instead of sending its past requests again
	due := epochMs(first)
	if c.sched.first.Equal(due) && c.sched.until.Equal(deadline) {
		due = c.sched.next
	}
	c.sched = schedule{first: epochMs(first), until: deadline}
	interval := time.Duration(float64(time.Second) / rate)
	if c.p.Proto == "h2" {
		c.sched.next = c.runOpenH2(ctx, state, rec, due, deadline, interval)
	} else {
		c.sched.next = c.runOpen(ctx, state, rec, due, deadline, interval)
	}
	if ctx.Err() != nil {
		c.drop()
	}
	return k.result(), nil
}

// schedule is the open model's last call: its first due time and end, and the next request
// due.
type schedule struct {
	first, until, next time.Time
}

// runOpen sends a request at every due time from due until the deadline, one interval apart,
// and returns the due time of the next it did not send.
func (c *Client) runOpen(ctx context.Context, state *lib.State, rec *recorder, due, until time.Time, interval time.Duration) time.Time {
	req := h1Request(c.p, state.Options.UserAgent.String)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	var prevEnd time.Time
	for ; due.Before(until); due = due.Add(interval) {
		if ctx.Err() != nil {
			return due
		}
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return due
			case <-timer.C:
			}
		}
		sent := time.Now()
		o, retry := c.h1Once(ctx, state, rec, req, sent)
		if retry {
			o, _ = c.h1Once(ctx, state, rec, req, time.Now())
		}
		if ctx.Err() != nil {
			return due
		}
		rec.behind(prevEnd.After(due), o.start.Sub(due))
		prevEnd = o.end
		o.start = due // latency from when it was due
		rec.done(o)
	}
	// the schedule's end: returning before it would have k6 call again at once, and again
	if wait := time.Until(until); wait > 0 && ctx.Err() == nil {
		timer.Reset(wait)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
	}
	return due
}
