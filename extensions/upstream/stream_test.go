package upstream

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStream(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	tests := []struct {
		query      string
		chunks     int
		chunkBytes int
	}{
		{"", 8, 4096},
		{"?chunks=1&chunk_bytes=1", 1, 1},
		{"?chunks=3&chunk_bytes=100000&interval_ms=1", 3, 100000},
		{"?chunk_bytes=1048576&chunks=2", 2, 1 << 20},
		{"?chunks=50&chunk_bytes=7&unknown=1", 50, 7},
	}
	for _, p := range allProtos {
		c := s.client(t, p, true)
		for _, tt := range tests {
			t.Run(string(p)+tt.query, func(t *testing.T) {
				t.Parallel()
				resp, body := get(t, c, s.url(p, "/stream"+tt.query))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status = %d: %s", resp.StatusCode, body)
				}
				if resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
					t.Errorf("Content-Length is set (%d), want none", resp.ContentLength)
				}
				if (p == protoH1 || p == protoH1C) && (len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked") {
					t.Errorf("Transfer-Encoding = %v, want chunked", resp.TransferEncoding)
				}
				want := bytes.Repeat(Pattern(tt.chunkBytes), tt.chunks)
				if !bytes.Equal(body, want) {
					t.Errorf("body is %d bytes, want %d (%d chunks of %d)", len(body), len(want), tt.chunks, tt.chunkBytes)
				}
			})
		}
	}
}

// TestStreamIncremental proves each chunk leaves when written, not when the
// response ends.
func TestStreamIncremental(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const interval = 200 * time.Millisecond
	for _, p := range allProtos {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			c := s.client(t, p, true)
			start := time.Now()
			resp, err := c.Get(s.url(p, "/stream?chunks=3&chunk_bytes=1000&interval_ms=200"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var arrivals []time.Duration
			buf := make([]byte, 1000)
			for {
				if _, err := io.ReadFull(resp.Body, buf); err != nil {
					if err != io.EOF {
						t.Fatalf("after %d chunks: %v", len(arrivals), err)
					}
					break
				}
				arrivals = append(arrivals, time.Since(start))
			}
			if len(arrivals) != 3 {
				t.Fatalf("got %d chunks, want 3", len(arrivals))
			}
			if arrivals[0] >= interval {
				t.Errorf("first chunk after %v, want it before the first interval (%v)", arrivals[0], interval)
			}
			if spread := arrivals[2] - arrivals[0]; spread < 2*interval-20*time.Millisecond {
				t.Errorf("chunks arrived over %v (%v), want about %v apart", spread, arrivals, interval)
			}
		})
	}
}

// TestStreamedRoutesLeaveBufferingToTheProxy: /sse and /stream say nothing about how a proxy
// should buffer them (no X-Accel-Buffering, which would switch nginx's buffering off whatever
// its config says) and are never compressed, even for a client that accepts it as browsers
// do: what the probes see is the proxy's own doing.
func TestStreamedRoutesLeaveBufferingToTheProxy(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	tests := []struct {
		path        string
		accept      string
		contentType string
	}{
		{"/sse?count=2&interval_ms=0", "text/event-stream", "text/event-stream"},
		{"/stream?chunks=2&chunk_bytes=64", "*/*", "application/octet-stream"},
	}
	for _, p := range allProtos {
		c := s.client(t, p, true)
		for _, tt := range tests {
			t.Run(string(p)+tt.path, func(t *testing.T) {
				t.Parallel()
				req, err := http.NewRequest(http.MethodGet, s.url(p, tt.path), nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Accept", tt.accept)
				// set by hand, so the client hands the body over as it came
				req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if _, err := io.Copy(io.Discard, resp.Body); err != nil {
					t.Fatal(err)
				}
				for k, want := range map[string]string{
					"Content-Type":      tt.contentType,
					"Cache-Control":     "no-cache",
					"X-Accel-Buffering": "",
					"Content-Encoding":  "",
				} {
					if got := resp.Header.Values(k); strings.Join(got, ", ") != want {
						t.Errorf("%s = %q, want %q", k, got, want)
					}
				}
			})
		}
	}
}
