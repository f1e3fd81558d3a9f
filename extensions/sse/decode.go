package sse

import (
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// codings are the response's content codings that k6/http decodes (gzip, deflate, br, zstd),
// in the order they were applied, or nil when the body is to be read as it came: no
// Content-Encoding, identity, or a coding k6/http would not decode either (then nothing is
// decoded, so that what is parsed and counted is at least the bytes that came).
func codings(contentEncoding string) []string {
	var out []string
	for _, c := range strings.Split(contentEncoding, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		switch c {
		case "", "identity":
		case "gzip", "x-gzip", "deflate", "br", "zstd":
			out = append(out, c)
		default:
			return nil
		}
	}
	return out
}

// decoder is a body read through its content codings, last applied first. Each decoder
// reads no more of the body than it needs for the output it has to give, so what comes out
// is timed when the bytes that made it arrived: a stream compressed and flushed event by
// event is still timed event by event.
type decoder struct {
	io.Reader
	closers []func() error
}

// newDecoder wraps body in a decoder for each coding. It reads the codings' headers (gzip,
// zlib) from body, so it is called on the first Read, never in RoundTrip, where it would wait
// for body bytes before the response is handed over.
func newDecoder(body io.Reader, codings []string) (*decoder, error) {
	d := &decoder{Reader: body}
	for i := len(codings) - 1; i >= 0; i-- {
		switch codings[i] {
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(d.Reader)
			if err != nil {
				return d, decodeErr(codings[i], err)
			}
			d.Reader = zr
			d.closers = append(d.closers, zr.Close)
		case "deflate":
			// HTTP's deflate is zlib-wrapped (RFC 9110), as k6/http reads it
			zr, err := zlib.NewReader(d.Reader)
			if err != nil {
				return d, decodeErr(codings[i], err)
			}
			d.Reader = zr
			d.closers = append(d.closers, zr.Close)
		case "br":
			d.Reader = brotli.NewReader(d.Reader)
		case "zstd":
			// one goroutine: zstd then decodes in the caller's Read, block by block, without
			// reading ahead in the background
			zr, err := zstd.NewReader(d.Reader, zstd.WithDecoderConcurrency(1))
			if err != nil {
				return d, decodeErr(codings[i], err)
			}
			d.Reader = zr
			d.closers = append(d.closers, func() error { zr.Close(); return nil })
		}
	}
	return d, nil
}

// Read implements io.Reader, naming the coding of a body that does not decode.
func (d *decoder) Read(p []byte) (int, error) {
	n, err := d.Reader.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("decoding the response body (Content-Encoding): %w", err)
	}
	return n, err
}

func (d *decoder) close() {
	for _, c := range d.closers {
		_ = c()
	}
}

func decodeErr(coding string, err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF // an empty body is empty in every coding
	}
	return fmt.Errorf("decoding the response body (Content-Encoding %s): %w", coding, err)
}
