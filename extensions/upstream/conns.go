package upstream

import (
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
)

// connCounters counts connections accepted per listener: "fresh" scenarios
// must open exactly one per request, and /debug/conns lets the end-to-end
// test prove it. TCP ones are counted at accept, TLS handshakes that later
// fail included; QUIC ones (h3) once their handshake is complete.
type connCounters struct {
	h1c atomic.Int64
	tls atomic.Int64
	h3  atomic.Int64
}

type countingListener struct {
	net.Listener
	accepted *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// serveConns answers GET /debug/conns with {"h1c":N,"tls":M,"h3":K}: the
// number of connections each listener has accepted since start, the one
// carrying this request included. Read it before and after a run: the difference is the
// number of connections the run opened.
func (h *Handler) serveConns(w http.ResponseWriter) {
	b := make([]byte, 0, 64)
	b = append(b, `{"h1c":`...)
	b = strconv.AppendInt(b, h.conns.h1c.Load(), 10)
	b = append(b, `,"tls":`...)
	b = strconv.AppendInt(b, h.conns.tls.Load(), 10)
	b = append(b, `,"h3":`...)
	b = strconv.AppendInt(b, h.conns.h3.Load(), 10)
	b = append(b, '}')
	serveCounters(w, b)
}

// serveCounters answers with b, a JSON document of counters read now: never cached.
func serveCounters(w http.ResponseWriter, b []byte) {
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Cache-Control"] = noStore
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	_, _ = w.Write(b)
}
