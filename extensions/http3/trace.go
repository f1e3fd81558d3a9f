package http3

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
)

// dialedTrace returns ctx with its client trace (k6's httpext.Tracer) wrapped
// so that a request whose own dial made the connection is never told the
// connection was reused.
//
// quic-go's Transport calls a connection reused when its handshake is
// already complete at the moment the request looks at it, right after
// starting the dial. On a busy machine the dial can finish first, and GotConn
// then reports a connection opened for this very request as reused; k6's
// tracer answers by setting connecting to 0 (it takes a reused connection's
// connect times to be stale), so fresh h3 connections went untimed, the more
// often the more loaded the client.
func dialedTrace(ctx context.Context) context.Context {
	old := httptrace.ContextClientTrace(ctx)
	if old == nil || old.GotConn == nil {
		return ctx
	}
	var dialed atomic.Bool
	fixed := *old
	fixed.ConnectStart = func(network, addr string) {
		dialed.Store(true)
		if old.ConnectStart != nil {
			old.ConnectStart(network, addr)
		}
	}
	fixed.GotConn = func(info httptrace.GotConnInfo) {
		if dialed.Load() {
			info.Reused = false
		}
		old.GotConn(info)
	}
	return &traceContext{Context: ctx, old: old, fixed: &fixed}
}

// traceContext is ctx with one client trace in place of another. It cannot be
// made with httptrace.WithClientTrace, which calls both the new hooks and the
// old ones.
type traceContext struct {
	context.Context
	old, fixed *httptrace.ClientTrace
}

func (c *traceContext) Value(key any) any {
	v := c.Context.Value(key)
	if t, ok := v.(*httptrace.ClientTrace); ok && t == c.old {
		return c.fixed
	}
	return v
}
