package upstream

import (
	"net/http"
	"strconv"
	"sync/atomic"
)

// listenerID indexes servedCounters; listenerNames are its /debug/served
// keys, in the same order.
type listenerID uint8

const (
	listenerH1C listenerID = iota
	listenerTLS
	listenerH3
	numListeners
)

var listenerNames = [numListeners]string{"h1c", "tls", "h3"}

// servedCell counts the answers of one route on one listener and their body
// bytes. The padding keeps every cell on a cache line of its own (as far as
// the allocation's alignment allows), so that cores serving different routes
// do not contend for one line.
type servedCell struct {
	requests atomic.Int64
	bytes    atomic.Int64
	_        [64 - 16]byte
}

// servedCounters is the audit of what the upstream answered, per listener and
// route (an index of routes): a benchmark reads /debug/served before and
// after a run, and a client that completed more requests than the upstream
// answered was answered by something else, a caching proxy. Counting is two
// atomic adds per request: no lock, no allocation.
type servedCounters [numListeners][]servedCell

func newServedCounters() servedCounters {
	var c servedCounters
	for l := range c {
		c[l] = make([]servedCell, len(routes))
	}
	return c
}

// listenerOf tells which listener r came through without a context lookup:
// only the TLS listener and HTTP/3 set r.TLS, and quic-go's http3.Server sets
// ProtoMajor 3 (extended CONNECT included), where net/http's TLS listener
// says 1 or 2.
func listenerOf(r *http.Request) listenerID {
	switch {
	case r.TLS == nil:
		return listenerH1C
	case r.ProtoMajor == 3:
		return listenerH3
	default:
		return listenerTLS
	}
}

// cell is the counter of routes[route] on r's listener.
func (c *servedCounters) cell(r *http.Request, route int) *servedCell {
	return &c[listenerOf(r)][route]
}

// count records one answer to r with n body bytes written. A HEAD answer has
// no body: net/http, its HTTP/2 server and quic-go accept the writes and send
// nothing, so it counts 0 bytes.
func (cell *servedCell) count(r *http.Request, n int64) {
	if n > 0 && r.Method != http.MethodHead {
		cell.bytes.Add(n)
	}
	cell.requests.Add(1)
}

// serveServed answers GET /debug/served with every listener and, in each,
// every counted route, zeros included, so that a reader can subtract two
// readings key by key:
//
//	{"h1c":{"/":{"requests":N,"bytes":B},"/json":{...},...,"/ws":{...}},"tls":{...},"h3":{...}}
//
// Each counter is read on its own: a reading taken during a run is not a
// snapshot of one instant, one taken before or after is exact. Neither this
// route nor any other that is not in routes is counted, so reading the
// counters does not move them.
func (h *Handler) serveServed(w http.ResponseWriter) {
	b := make([]byte, 0, 1024)
	b = append(b, '{')
	for l := range numListeners {
		if l > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, listenerNames[l])
		b = append(b, ":{"...)
		for rt := range routes {
			if rt > 0 {
				b = append(b, ',')
			}
			cell := &h.served[l][rt]
			b = strconv.AppendQuote(b, routes[rt].path)
			b = append(b, `:{"requests":`...)
			b = strconv.AppendInt(b, cell.requests.Load(), 10)
			b = append(b, `,"bytes":`...)
			b = strconv.AppendInt(b, cell.bytes.Load(), 10)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	serveCounters(w, b)
}

// bodyCounter counts the body bytes written through it.
type bodyCounter struct {
	http.ResponseWriter
	n int64
}

func (bc *bodyCounter) Write(p []byte) (int, error) {
	n, err := bc.ResponseWriter.Write(p)
	bc.n += int64(n)
	return n, err
}

// httpError is http.Error returning the body bytes it wrote, for the served
// counters. Only error answers go through it, so the wrapper's allocation is
// off the hot path.
func httpError(w http.ResponseWriter, msg string, code int) int64 {
	bc := &bodyCounter{ResponseWriter: w}
	http.Error(bc, msg, code)
	return bc.n
}
