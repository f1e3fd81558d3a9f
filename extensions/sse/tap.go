package sse

import (
	"io"
	"net/http"
	"time"
)

// mode selects what the tap looks for in the response body.
type mode int

const (
	// modeEvents parses text/event-stream and times each event (sse.get).
	modeEvents mode = iota
	// modeChunks times each read that returned data (sse.stream).
	modeChunks
)

// recorder collects body-level timings of one sse.get()/sse.stream() call.
//
// k6's httpext.MakeRequest reads the whole body before it returns, so the
// recorder sees the body through tapTransport, a RoundTripper that wraps the
// VU's own state.Transport and every response body it returns. Everything
// happens on the calling goroutine: the client calls RoundTrip and MakeRequest
// reads the body synchronously.
type recorder struct {
	mode      mode
	maxEvents int // 0: no limit

	// expect is the body every response must be (sse.stream()'s expect param), compared with
	// each read as it returns; nil: none, the body is not compared.
	expect *string

	start time.Time // the first RoundTrip (after k6's rps limiter)
	now   func() time.Time

	// cur is the last response's record: with redirects the client drains
	// and closes each earlier body before it sends the next request, so the
	// last hop is the response the caller gets.
	cur *hop
}

// hop is what was seen of one response and its body.
type hop struct {
	headersAt time.Time
	end       time.Time // EOF, read error, maxEvents reached or Close
	bytes     int64
	chunks    []time.Duration // modeChunks: when each read returned data
	sizes     []int64         // modeChunks: how many bytes each of those reads returned
	events    []timedEvent    // modeEvents
	parser    *parser
	check     *bodyCheck // with recorder.expect: the body so far against it
}

type timedEvent struct {
	Event
	At time.Duration // since recorder.start
}

func newRecorder(m mode, maxEvents int) *recorder {
	return &recorder{mode: m, maxEvents: maxEvents, now: time.Now}
}

func (r *recorder) since(t time.Time) time.Duration {
	return t.Sub(r.start)
}

// tapTransport hands every request to next (the VU's state.Transport, so k6's
// dialer, hosts, TLS and connection reuse apply unchanged) and wraps the body
// of every response it returns.
type tapTransport struct {
	next http.RoundTripper
	rec  *recorder
}

var _ http.RoundTripper = &tapTransport{}

// RoundTrip implements http.RoundTripper.
func (t *tapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := t.rec
	if rec.start.IsZero() {
		rec.start = rec.now()
	}
	h := &hop{}
	if rec.mode == modeEvents {
		h.parser = newParser()
	}
	if rec.expect != nil {
		h.check = newBodyCheck(*rec.expect)
	}
	rec.cur = h

	resp, err := t.next.RoundTrip(req)
	if err != nil {
		h.end = rec.now()
		return resp, err
	}
	h.headersAt = rec.now()
	resp.Body = &tapBody{rc: resp.Body, rec: rec, hop: h, codings: codings(resp.Header.Get("Content-Encoding"))}
	return resp, nil
}

// tapBody timestamps reads as they return, before k6 discards the data. A body with a
// Content-Encoding is decoded first, as k6/http decodes its bodies (and a browser its
// responses): events are parsed, and bytes and reads counted, on the body the server meant,
// timed when the compressed bytes that carried them arrived. The response keeps its
// Content-Encoding header, so a script still sees that the body came compressed.
type tapBody struct {
	rc      io.ReadCloser
	rec     *recorder
	hop     *hop
	codings []string // to decode, on the first Read
	dec     *decoder // nil until then, or without codings
	decErr  error    // the decoder could not start: every Read returns it
	done    bool     // maxEvents reached: report EOF without reading further
}

// Read implements io.Reader.
func (b *tapBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.read(p)
	now := b.rec.now()
	h := b.hop
	if n > 0 {
		h.bytes += int64(n)
		if h.check != nil {
			h.check.feed(p[:n])
		}
		switch b.rec.mode {
		case modeChunks:
			h.chunks = append(h.chunks, b.rec.since(now))
			h.sizes = append(h.sizes, int64(n))
		case modeEvents:
			if perr := b.feed(p[:n], now); perr != nil && err == nil {
				err = perr
			}
		}
	}
	if err != nil || b.done {
		b.markEnd(now)
	}
	if b.done && err == nil {
		err = io.EOF
	}
	return n, err
}

// read reads the body, through its decoder when it has codings.
func (b *tapBody) read(p []byte) (int, error) {
	if len(b.codings) == 0 {
		return b.rc.Read(p)
	}
	if b.decErr != nil {
		return 0, b.decErr
	}
	if b.dec == nil {
		b.dec, b.decErr = newDecoder(b.rc, b.codings)
		if b.decErr != nil {
			return 0, b.decErr
		}
	}
	return b.dec.Read(p)
}

func (b *tapBody) feed(chunk []byte, now time.Time) error {
	h := b.hop
	events, err := h.parser.feed(chunk)
	at := b.rec.since(now)
	for _, ev := range events {
		h.events = append(h.events, timedEvent{Event: ev, At: at})
		if b.rec.maxEvents > 0 && len(h.events) >= b.rec.maxEvents {
			b.done = true
			return nil
		}
	}
	return err
}

func (b *tapBody) markEnd(now time.Time) {
	if b.hop.end.IsZero() {
		b.hop.end = now
	}
}

// Close implements io.Closer.
func (b *tapBody) Close() error {
	b.markEnd(b.rec.now())
	if b.dec != nil {
		b.dec.close()
	}
	return b.rc.Close()
}
