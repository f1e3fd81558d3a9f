package load

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// strictH2 is an HTTP/2 server that allows one stream at a time and answers each after delay,
// counting a stream opened beyond that limit in over. Go's own server cannot stand in here: it
// frees a stream's slot only after its writer reports the END_STREAM written, so a client that
// opens the next stream as soon as it reads that END_STREAM is, now and then, refused.
type strictH2 struct {
	over  atomic.Int32
	delay time.Duration
}

// serveStrictH2 starts it on loopback with httptest's certificate, whose roots srv trusts.
func serveStrictH2(t *testing.T, delay time.Duration) (s *strictH2, srv *httptest.Server, url string) {
	t.Helper()
	s = &strictH2{delay: delay}
	srv, url = serveRawH2(t, s.serve)
	return s, srv, url
}

// serveRawH2 serves each connection with serve on loopback, over TLS with ALPN h2 and
// httptest's certificate, whose roots srv trusts: an HTTP/2 server written frame by frame.
func serveRawH2(t *testing.T, serve func(net.Conn)) (srv *httptest.Server, url string) {
	t.Helper()
	srv = httptest.NewUnstartedServer(nil)
	srv.StartTLS() // for its certificate only
	srv.Close()
	cfg := srv.TLS.Clone()
	cfg.NextProtos = []string{"h2"}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return srv, "https://" + testHost + ":" + port + "/"
}

func (s *strictH2) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	if _, err := io.ReadFull(br, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(c, br)
	_ = fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1})
	var hdr bytes.Buffer
	_ = hpack.NewEncoder(&hdr).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	body := []byte(strings.Repeat("x", 4096))
	active := 0
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.HeadersFrame:
			if active++; active > 1 {
				s.over.Add(1)
			}
			time.Sleep(s.delay)
			active-- // freed before its END_STREAM leaves: the client may open the next at once
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: hdr.Bytes(), EndHeaders: true})
			_ = fr.WriteData(f.StreamID, true, body)
		}
	}
}
