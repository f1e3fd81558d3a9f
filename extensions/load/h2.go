package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"go.k6.io/k6/v2/lib"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Flow control: the loop reads every body as it comes, so it gives the server large windows
// and hands them back in large steps, as h2load does, instead of a WINDOW_UPDATE per DATA.
const (
	h2StreamWindow = 4 << 20 // SETTINGS_INITIAL_WINDOW_SIZE
	h2ConnWindow   = 1 << 30
)

var errNoStreams = errors.New("h2: the server allows no stream (SETTINGS_MAX_CONCURRENT_STREAMS 0)")

// h2Conn is an HTTP/2 connection carrying up to plan.Streams concurrent streams, read and
// written by the one goroutine that runs the loop: no hand-off per request. Requests are
// written to a buffer that is flushed when nothing more is to be read (step), so the HEADERS
// of several streams leave in one write, as a native client (h2load) sends them.
type h2Conn struct {
	conn       net.Conn
	raw        *bufio.Reader // the TCP bytes under TLS, not yet decrypted
	br         *bufio.Reader
	bw         *bufio.Writer
	fr         *http2.Framer
	dl         deadline // bound by the oldest stream in flight
	nextID     uint32
	streams    map[uint32]*h2Stream
	maxStreams int    // the server's SETTINGS_MAX_CONCURRENT_STREAMS, -1 until it sets one
	goAway     bool   // the server is closing: no new stream
	unacked    uint32 // connection-level bytes received and not yet handed back
	sending           // the request bodies' flow control (h2send.go)
	ended      []uint32
	outs       []outcome   // take's
	refused    []time.Time // the starts of streams a GOAWAY left unprocessed
	reader     *h2Reader   // the open model's (openh2.go); nil: the VU reads
	served     int         // streams answered on it
}

type h2Stream struct {
	o      outcome
	body   bodyCheck // the body against plan.expect, as its DATA frames come
	recv   uint32    // flow-controlled bytes not yet handed back
	gotEnd bool      // final (non-1xx) headers received
	upload           // its request body still to send (h2send.go)
}

// h2Headers is the request's header block, encoded once. Fields the static table lacks are
// sent as literals that are never indexed, so the block changes no HPACK state and every
// stream can carry the same bytes. It opens with a dynamic table size update to 0 (RFC 7541
// 6.3), always within the server's SETTINGS_HEADER_TABLE_SIZE: a server that lowered it
// requires an update at the start of the next block, and this one is always there.
func h2Headers(p *plan, userAgent string) []byte {
	buf := bytes.NewBuffer([]byte{0x20})
	enc := hpack.NewEncoder(buf)
	fields := []hpack.HeaderField{
		{Name: ":method", Value: p.method},
		{Name: ":scheme", Value: p.u.Scheme},
		{Name: ":authority", Value: p.authority(), Sensitive: true},
		{Name: ":path", Value: p.requestURI(), Sensitive: p.requestURI() != "/"},
	}
	if userAgent != "" {
		fields = append(fields, hpack.HeaderField{Name: "user-agent", Value: userAgent, Sensitive: true})
	}
	if p.uploading() {
		fields = append(fields,
			hpack.HeaderField{Name: "content-type", Value: "application/octet-stream", Sensitive: true},
			hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(p.UploadBytes), Sensitive: true})
	}
	for _, f := range fields {
		_ = enc.WriteField(f) // writes to a bytes.Buffer cannot fail
	}
	return buf.Bytes()
}

// openH2 dials a connection, sends the client preface and settings, and waits for the
// server's SETTINGS (its first frame) so that the first streams respect its limit.
func (c *Client) openH2(ctx context.Context, state *lib.State, rec *recorder) (*h2Conn, error) {
	var raw *bufio.Reader
	under := func(tcp net.Conn) net.Conn {
		raw = bufio.NewReaderSize(tcp, 64<<10)
		return &readBuffered{Conn: tcp, r: raw}
	}
	readSize, writeSize := 64<<10, 16<<10
	if c.idling {
		// a connection that will sit idle after one stream: no buffer of its own under TLS
		// (raw reads as empty), small ones above it, which go once it is held
		under, raw, readSize, writeSize = nil, bufio.NewReaderSize(nil, 16), 8<<10, 4<<10
	}
	conn, err := c.connect(ctx, state, rec, under)
	if err != nil {
		return nil, err
	}
	h := &h2Conn{
		conn: conn, raw: raw, br: bufio.NewReaderSize(conn, readSize), bw: bufio.NewWriterSize(conn, writeSize),
		dl: deadline{conn: conn, timeout: c.p.timeout}, nextID: 1, streams: map[uint32]*h2Stream{}, maxStreams: -1,
		sending: newSending(),
	}
	h.fr = http2.NewFramer(h.bw, h.br)
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	h.fr.MaxHeaderListSize = 1 << 20
	h.fr.SetReuseFrames()
	_, _ = h.bw.WriteString(http2.ClientPreface)
	_ = h.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
	)
	_ = h.fr.WriteWindowUpdate(0, h2ConnWindow-65535)
	if err := h.bw.Flush(); err != nil {
		c.drop()
		return nil, fmt.Errorf("h2: send preface: %w", err)
	}
	f, err := h.fr.ReadFrame()
	if err != nil {
		c.drop()
		return nil, fmt.Errorf("h2: read the server's SETTINGS: %w", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		c.drop()
		return nil, fmt.Errorf("h2: the server's first frame is %v, not SETTINGS (RFC 9113 3.4)", f.Header().Type)
	}
	if err := h.settings(sf); err != nil {
		c.drop()
		return nil, err
	}
	if h.maxStreams == 0 {
		c.drop()
		return nil, errNoStreams
	}
	if h.maxStreams > 0 && h.maxStreams < c.p.Streams && !c.warned {
		// said, not hidden: the run has fewer streams in flight than STREAMS asks
		c.warned = true
		state.Logger.Warnf("%s allows %d concurrent streams per connection: the native loop keeps %d in flight, not the %d asked (STREAMS)",
			c.p.addr, h.maxStreams, h.maxStreams, c.p.Streams)
	}
	c.h2 = h
	return h, nil
}

// settings applies a server SETTINGS frame and acknowledges it.
func (h *h2Conn) settings(sf *http2.SettingsFrame) error {
	if v, ok := sf.Value(http2.SettingMaxConcurrentStreams); ok {
		h.maxStreams = int(v)
	}
	h.sendSettings(sf)
	return h.fr.WriteSettingsAck()
}

// runH2 keeps plan.Streams requests in flight until the deadline, then waits for them.
func (c *Client) runH2(ctx context.Context, state *lib.State, rec *recorder, until time.Time) {
	block := h2Headers(c.p, state.Options.UserAgent.String)
	retried := false
	for {
		now := time.Now()
		opening := now.Before(until) && ctx.Err() == nil
		h := c.h2
		if h == nil {
			if !opening {
				return
			}
			var err error
			if h, err = c.openH2(ctx, state, rec); err != nil {
				if ctx.Err() == nil {
					rec.done(outcome{start: now, end: time.Now(), err: err})
				}
				return
			}
			now = time.Now()
		}
		limit := c.p.Streams
		if h.maxStreams >= 0 && h.maxStreams < limit {
			limit = h.maxStreams
		}
		upload := c.p.uploading()
		for opening && !h.goAway && len(h.streams) < limit && h.nextID < 1<<31 {
			id := h.nextID
			h.nextID += 2
			s := &h2Stream{o: outcome{start: now}, body: bodyCheck{content: c.p.expect}}
			if upload {
				s.upload = h.newUpload(c.p.UploadBytes)
			}
			_ = h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: s.left == 0, EndHeaders: true})
			h.streams[id] = s
		}
		if upload {
			h.send(c.p.upload)
		}
		if len(h.streams) == 0 {
			switch {
			case h.goAway || h.nextID >= 1<<31:
				c.drop() // the server is closing it, or its stream IDs are used up: open anew
				continue
			case opening: // only a stream limit of 0 leaves nothing in flight before the deadline
				rec.done(outcome{start: now, end: time.Now(), err: errNoStreams})
				c.drop()
			}
			return // the deadline: the connection stays open for the next call
		}
		if err := h.step(now); err != nil {
			if ctx.Err() != nil {
				c.drop()
				return // cut off by the end of the test: nothing to record
			}
			if !retried && rec.requests == 0 && h.served > 0 && h.untouched() && isClosed(err) {
				// the server closed a connection that sat idle between two calls (its GOAWAY
				// unread) before any of this call's first streams reached it: send them on a new
				// one, once, as h1's stale-connection retry does. Mid-call, a closed connection
				// fails its streams, as Go's h2 client fails them.
				retried = true
				c.drop()
				continue
			}
			for _, s := range h.streams {
				s.o.end, s.o.status, s.o.err = time.Now(), 0, err
				rec.done(s.o)
			}
			c.drop()
			return
		}
		h.finish(rec)
	}
}

// step flushes what is written once nothing is left to read, then reads and handles one
// frame. An error ends the connection. "Nothing left" counts the TLS records already
// received too (TLS hands them over one at a time): the HEADERS of all the streams that
// ended in them leave in one write, as h2load writes once it has read all there was.
func (h *h2Conn) step(now time.Time) error {
	if h.br.Buffered() == 0 && h.raw.Buffered() == 0 {
		if err := h.bw.Flush(); err != nil {
			return fmt.Errorf("h2: write: %w", err)
		}
	}
	if h.dl.due(now) {
		h.dl.set(now, h.oldest(now))
	}
	f, err := h.read()
	if err != nil {
		return err
	}
	return h.handle(f)
}

// read reads the next frame.
func (h *h2Conn) read() (http2.Frame, error) {
	f, err := h.fr.ReadFrame()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("h2: read: %w", err)
	}
	return f, nil
}

// handle applies one frame the server sent: a stream's answer, flow control, settings, a
// ping, a GOAWAY. An error ends the connection.
func (h *h2Conn) handle(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.MetaHeadersFrame:
		s := h.streams[f.StreamID]
		if s == nil {
			return nil
		}
		if !s.gotEnd {
			status, perr := strconv.Atoi(f.PseudoValue("status"))
			if perr != nil {
				return fmt.Errorf("h2: stream %d: :status %q", f.StreamID, f.PseudoValue("status"))
			}
			if status >= 100 && status < 200 {
				return nil // interim answer: the final one follows
			}
			s.o.status, s.o.firstByte, s.gotEnd = status, time.Now(), true
		}
		if f.StreamEnded() {
			h.end(f.StreamID, s)
		}
	case *http2.DataFrame:
		n := f.Header().Length // flow control counts padding too
		h.unacked += n
		if h.unacked >= h2ConnWindow/2 {
			_ = h.fr.WriteWindowUpdate(0, h.unacked)
			h.unacked = 0
		}
		s := h.streams[f.StreamID]
		if s == nil {
			return nil
		}
		s.body.feed(f.Data())
		s.o.bytes = s.body.n
		s.recv += n
		if f.StreamEnded() {
			h.end(f.StreamID, s)
		} else if s.recv >= h2StreamWindow/2 {
			_ = h.fr.WriteWindowUpdate(f.StreamID, s.recv)
			s.recv = 0
		}
	case *http2.RSTStreamFrame:
		if s := h.streams[f.StreamID]; s != nil {
			s.o.status, s.o.err = 0, fmt.Errorf("h2: stream %d reset by the server: %v", f.StreamID, f.ErrCode)
			h.end(f.StreamID, s)
		}
	case *http2.SettingsFrame:
		if !f.IsAck() {
			return h.settings(f)
		}
	case *http2.WindowUpdateFrame:
		h.windowUpdate(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			return h.fr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		h.goAway = true
		for id, st := range h.streams {
			if id > f.LastStreamID {
				// never processed (RFC 9113 6.8): nothing to record; the open model sends it
				// again on a new connection (refused)
				h.refused = append(h.refused, st.o.start)
				delete(h.streams, id)
			}
		}
	}
	return nil
}

// oldest is the start of the oldest stream in flight, now when there is none.
func (h *h2Conn) oldest(now time.Time) time.Time {
	oldest := now
	for _, s := range h.streams {
		if s.o.start.Before(oldest) {
			oldest = s.o.start
		}
	}
	return oldest
}

// untouched tells whether no stream in flight has had a byte of its answer.
func (h *h2Conn) untouched() bool {
	for _, s := range h.streams {
		if s.gotEnd || s.o.bytes > 0 {
			return false
		}
	}
	return true
}

// end marks a stream as ended: finish records it.
func (h *h2Conn) end(id uint32, s *h2Stream) {
	if s.o.end.IsZero() {
		s.o.end = time.Now()
		s.o.differs, s.o.differsAt = s.body.differs, s.body.differsAt
		h.ended = append(h.ended, id)
	}
}

// finish records the streams that have ended.
func (h *h2Conn) finish(rec *recorder) {
	for _, o := range h.take() {
		rec.done(o)
	}
}

// take removes the streams that have ended and returns their outcomes, valid until the next
// call.
func (h *h2Conn) take() []outcome {
	h.outs = h.outs[:0]
	for _, id := range h.ended {
		s := h.streams[id]
		if s == nil {
			continue // dropped by a GOAWAY
		}
		if s.o.err == nil {
			s.o.proto = "HTTP/2.0"
			h.served++
		}
		if s.left > 0 && s.o.err == nil {
			// answered before its body was all sent (a 413): the rest is not wanted
			_ = h.fr.WriteRSTStream(id, http2.ErrCodeCancel)
		}
		h.outs = append(h.outs, s.o)
		delete(h.streams, id)
	}
	h.ended = h.ended[:0]
	return h.outs
}
