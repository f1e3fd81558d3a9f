package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// answer is an HTTP/1.1 response as the loop verifies it: never more than its status,
// protocol and body size, the body read and dropped as it comes (compared first, when a
// bodyCheck expects one).
type answer struct {
	status int
	proto  string // HTTP/1.1 or HTTP/1.0
	bytes  int    // body bytes, after chunked decoding
	close  bool   // the connection ends with this answer
}

var errMalformed = errors.New("malformed HTTP/1.1 response")

// readAnswer reads one response (skipping 1xx interim ones) without copying it: lines are
// read in place from br's buffer, and the body is compared in place by body (reset first; its
// want nil: not compared), then discarded, counted.
func readAnswer(br *bufio.Reader, body *bodyCheck) (answer, error) {
	for {
		a, length, chunked, err := readHead(br)
		if err != nil {
			return a, err
		}
		if a.status >= 100 && a.status < 200 && a.status != 101 {
			continue // 100 Continue, 103 Early Hints: the answer follows
		}
		body.reset()
		if a.status == 101 {
			a.close = true // the connection speaks another protocol now
		}
		switch {
		case a.status == 204 || a.status == 304 || (a.status >= 100 && a.status < 200):
			// no body (RFC 9112 6.3)
		case chunked:
			a.bytes, err = readChunked(br, body)
		case length >= 0:
			a.bytes, err = readBody(br, length, body)
		default:
			// neither length nor chunks: the body runs to the connection's end
			a.bytes, err = readBody(br, -1, body)
			a.close = true
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return a, err
	}
}

// readHead reads the status line and the headers the loop needs: Content-Length,
// Transfer-Encoding and Connection. length is -1 without a Content-Length.
func readHead(br *bufio.Reader) (a answer, length int, chunked bool, err error) {
	line, err := readLine(br)
	if err != nil {
		return a, 0, false, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' || (line[7] != '1' && line[7] != '0') {
		return a, 0, false, fmt.Errorf("%w: status line %q", errMalformed, clip(line))
	}
	a.proto = "HTTP/1.1" // a constant, not string(line[:8]): no allocation per answer
	if line[7] == '0' {
		a.proto = "HTTP/1.0"
	}
	a.close = line[7] == '0' // HTTP/1.0 keeps the connection only if it says so
	a.status, err = strconv.Atoi(string(line[9:12]))
	if err != nil || a.status < 100 {
		return a, 0, false, fmt.Errorf("%w: status line %q", errMalformed, clip(line))
	}
	length = -1
	for {
		line, err = readLine(br)
		if err != nil {
			return a, 0, false, err
		}
		if len(line) == 0 {
			return a, length, chunked, nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return a, 0, false, fmt.Errorf("%w: header line %q", errMalformed, clip(line))
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, perr := strconv.Atoi(string(value))
			if perr != nil || n < 0 || (length >= 0 && n != length) {
				return a, 0, false, fmt.Errorf("%w: Content-Length %q", errMalformed, clip(value))
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			// chunked must be the last coding (RFC 9112 6.1); the upstream never compresses
			chunked = hasLastToken(value, "chunked")
			if !chunked {
				return a, 0, false, fmt.Errorf("%w: Transfer-Encoding %q without chunked last", errMalformed, clip(value))
			}
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, "close") {
				a.close = true
			} else if hasToken(value, "keep-alive") {
				a.close = false
			}
		}
	}
}

// readChunked reads a chunked body to its end (trailers included), comparing it by body, and
// returns its size.
func readChunked(br *bufio.Reader, body *bodyCheck) (int, error) {
	total := 0
	for {
		line, err := readLine(br)
		if err != nil {
			return total, err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 32)
		if err != nil || size < 0 {
			return total, fmt.Errorf("%w: chunk size %q", errMalformed, clip(line))
		}
		if size == 0 {
			for { // trailers, up to the empty line
				line, err = readLine(br)
				if err != nil || len(line) == 0 {
					return total, err
				}
			}
		}
		n, err := readBody(br, int(size), body)
		total += n
		if err != nil {
			return total, err
		}
		if line, err = readLine(br); err != nil || len(line) != 0 {
			if err == nil {
				err = fmt.Errorf("%w: %d bytes more than the chunk's size", errMalformed, len(line))
			}
			return total, err
		}
	}
}

// readBody reads n bytes of body (n < 0: up to the connection's end, which is then no error),
// comparing them by body in place in br's buffer, and returns how many it read. Without bytes
// to compare with it discards them, as it always did.
func readBody(br *bufio.Reader, n int, body *bodyCheck) (int, error) {
	if body.want == nil {
		if n >= 0 {
			return br.Discard(n)
		}
		m, err := io.Copy(io.Discard, br)
		return int(m), err
	}
	read := 0
	for n < 0 || read < n {
		if br.Buffered() == 0 {
			if _, err := br.Peek(1); err != nil { // one read from the connection
				if n < 0 && errors.Is(err, io.EOF) {
					err = nil
				}
				return read, err
			}
		}
		k := br.Buffered()
		if n >= 0 {
			k = min(k, n-read)
		}
		p, _ := br.Peek(k) // buffered: no read, no error
		body.feed(p)
		_, _ = br.Discard(k)
		read += k
	}
	return read, nil
}

// readLine returns the next line without its CRLF (or bare LF), in place in br's buffer:
// valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("%w: a line longer than %d bytes", errMalformed, br.Size())
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// hasToken tells whether a comma-separated header value lists token (case-insensitive).
func hasToken(value []byte, token string) bool {
	for _, t := range bytes.Split(value, []byte(",")) {
		if bytes.EqualFold(bytes.TrimSpace(t), []byte(token)) {
			return true
		}
	}
	return false
}

func hasLastToken(value []byte, token string) bool {
	i := bytes.LastIndexByte(value, ',')
	return bytes.EqualFold(bytes.TrimSpace(value[i+1:]), []byte(token))
}

// clip keeps an error's quote of the wire short.
func clip(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}
