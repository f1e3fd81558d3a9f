package load

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wire string
		want answer
		err  error  // errors.Is
		rest string // what is left to read after the answer: the next one's bytes
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT", answer{200, "HTTP/1.1", 5, false}, nil, "NEXT"},
		{"header names in any case, spaces around values", "HTTP/1.1 200 OK\r\ncontent-LENGTH:  3 \r\nX-A: b\r\n\r\nabc", answer{200, "HTTP/1.1", 3, false}, nil, ""},
		{"bare LF line ends", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", answer{200, "HTTP/1.1", 2, false}, nil, ""},
		{"chunked with extensions and trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nT: v\r\n\r\nNEXT", answer{200, "HTTP/1.1", 13, false}, nil, "NEXT"},
		{"interim answers skipped", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", answer{200, "HTTP/1.1", 1, false}, nil, ""},
		{"204 has no body", "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\nNEXT", answer{204, "HTTP/1.1", 0, false}, nil, "NEXT"},
		{"error status read whole", "HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy", answer{503, "HTTP/1.1", 4, false}, nil, ""},
		{"Connection: close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", answer{200, "HTTP/1.1", 0, true}, nil, ""},
		{"HTTP/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", answer{200, "HTTP/1.0", 0, true}, nil, ""},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", answer{200, "HTTP/1.0", 0, false}, nil, ""},
		{"body to the connection's end", "HTTP/1.1 200 OK\r\n\r\nall of it", answer{200, "HTTP/1.1", 9, true}, nil, ""},
		{"101 ends the connection", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", answer{101, "HTTP/1.1", 0, true}, nil, ""},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", answer{200, "HTTP/1.1", 5, false}, io.ErrUnexpectedEOF, ""},
		{"short chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc", answer{}, io.ErrUnexpectedEOF, ""},
		{"chunk longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", answer{}, errMalformed, ""},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", answer{}, errMalformed, ""},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", answer{}, errMalformed, ""},
		{"HTTP/2 preface answer", "HTTP/2 200\r\n\r\n", answer{}, errMalformed, ""},
		{"status not a number", "HTTP/1.1 2x0 OK\r\n\r\n", answer{}, errMalformed, ""},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", answer{}, errMalformed, ""},
		{"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", answer{}, errMalformed, ""},
		{"coding not ending in chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", answer{}, errMalformed, ""},
		{"header without colon", "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", answer{}, errMalformed, ""},
		{"closed before any byte", "", answer{}, io.EOF, ""},
		{"closed mid-head", "HTTP/1.1 200 OK\r\nContent-Le", answer{}, io.ErrUnexpectedEOF, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			br := bufio.NewReaderSize(strings.NewReader(tc.wire), 64)
			got, err := readAnswer(br, &bodyCheck{})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				if tc.want.bytes > 0 && got.bytes != tc.want.bytes {
					t.Errorf("bytes %d before the error, want %d", got.bytes, tc.want.bytes)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			rest, _ := io.ReadAll(br)
			if string(rest) != tc.rest {
				t.Errorf("left %q unread, want %q", rest, tc.rest)
			}
		})
	}
}

// A header line longer than the read buffer is an error, not a hang or a panic.
func TestReadAnswerLongLine(t *testing.T) {
	t.Parallel()
	wire := "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 100) + "\r\n\r\n"
	_, err := readAnswer(bufio.NewReaderSize(strings.NewReader(wire), 32), &bodyCheck{})
	if !errors.Is(err, errMalformed) || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("error %v, want a line too long", err)
	}
}
