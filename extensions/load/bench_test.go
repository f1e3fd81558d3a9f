package load

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// loopReader serves b over and over: a connection that always has the next answer.
type loopReader struct {
	b   []byte
	off int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.b[l.off:])
	l.off = (l.off + n) % len(l.b)
	return n, nil
}

// expectModes are the two ways the loop reads a body: its size alone (no expect option), or
// compared with the expected bytes as well.
var expectModes = []struct {
	name string
	want content
}{
	{"size", content{}},
	{"compared", content{want: upstream.Pattern(upstream.RootBodySize)}},
	{"repeated", repeating(string(upstream.Pattern(62)))},
}

// BenchmarkReadAnswer is the loop's per-response cost of reading an HTTP/1.1 answer of / from
// its buffer: the head parsed, the 4096-byte body read (and compared).
func BenchmarkReadAnswer(b *testing.B) {
	body := string(upstream.Pattern(upstream.RootBodySize))
	for _, tc := range []struct{ name, wire string }{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 4096\r\nContent-Type: application/octet-stream\r\nDate: Thu, 26 Nov 2026 05:00:00 GMT\r\n\r\n" + body},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" + body[:2048] + "\r\n800\r\n" + body[2048:] + "\r\n0\r\n\r\n"},
	} {
		for _, m := range expectModes {
			b.Run(tc.name+"/"+m.name, func(b *testing.B) {
				br := bufio.NewReaderSize(&loopReader{b: []byte(tc.wire)}, 32<<10)
				chk := bodyCheck{content: m.want}
				b.SetBytes(int64(len(tc.wire)))
				b.ReportAllocs()
				for b.Loop() {
					a, err := readAnswer(br, &chk)
					if err != nil || a.bytes != 4096 || chk.differs {
						b.Fatal(a, err, chk)
					}
				}
			})
		}
	}
}

// loopConn is a connection whose reads serve the same bytes over and over and whose writes go
// nowhere.
type loopConn struct {
	net.Conn
	r loopReader
}

func (c *loopConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (*loopConn) Write(p []byte) (int, error)  { return len(p), nil }
func (*loopConn) SetDeadline(time.Time) error  { return nil }

// BenchmarkH2Answer is the loop's per-response cost of reading an HTTP/2 answer of / on a
// stream: its HEADERS (:status 200, HPACK's static table) and its 4096-byte body in DATA frames.
func BenchmarkH2Answer(b *testing.B) {
	body := upstream.Pattern(upstream.RootBodySize)
	for _, tc := range []struct {
		frames int
		want   content
		mode   string
	}{
		{1, expectModes[0].want, expectModes[0].name},
		{1, expectModes[1].want, expectModes[1].name},
		{4, expectModes[0].want, expectModes[0].name},
		{4, expectModes[1].want, expectModes[1].name},
	} {
		b.Run(fmt.Sprintf("%d DATA frames/%s", tc.frames, tc.mode), func(b *testing.B) {
			var wire bytes.Buffer
			fr := http2.NewFramer(&wire, nil)
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x88}, EndHeaders: true})
			per := len(body) / tc.frames
			for i := range tc.frames {
				_ = fr.WriteData(1, i == tc.frames-1, body[i*per:(i+1)*per])
			}
			conn := &loopConn{r: loopReader{b: wire.Bytes()}}
			h := &h2Conn{
				conn: conn, raw: bufio.NewReader(strings.NewReader("")), br: bufio.NewReaderSize(conn, 64<<10),
				bw: bufio.NewWriterSize(conn, 16<<10), dl: deadline{conn: conn, timeout: time.Hour, moved: time.Now()},
				streams: map[uint32]*h2Stream{},
			}
			h.fr = http2.NewFramer(h.bw, h.br)
			h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
			h.fr.SetReuseFrames()
			b.SetBytes(int64(wire.Len()))
			b.ReportAllocs()
			s := &h2Stream{}
			for b.Loop() {
				*s = h2Stream{body: bodyCheck{content: tc.want}}
				h.streams[1] = s
				for s.o.end.IsZero() {
					if err := h.step(time.Now()); err != nil {
						b.Fatal(err)
					}
				}
				if s.o.bytes != len(body) || s.o.differs {
					b.Fatal(s.o)
				}
				delete(h.streams, 1)
				h.ended = h.ended[:0]
			}
		})
	}
}
