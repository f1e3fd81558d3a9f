package upstream

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestBytes: /bytes?size=N is the pattern's first N bytes with Content-Length N, for every size
// from 0 to MaxBytes, over every protocol; a size out of range, malformed or given twice is a
// 400 that names the parameter and its range.
func TestBytes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	sizes := []int{0, 1, 61, 62, 63, RootBodySize, 1 << 10, 64 << 10, 1 << 20, MaxBytes}
	for _, p := range allProtos {
		c := s.client(t, p, true)
		for _, n := range sizes {
			t.Run(string(p)+"/"+strconv.Itoa(n), func(t *testing.T) {
				t.Parallel()
				resp, body := get(t, c, s.url(p, "/bytes?size="+strconv.Itoa(n)))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %.100s", resp.StatusCode, body)
				}
				if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(n) {
					t.Errorf("Content-Length %q, want %d", got, n)
				}
				if got := resp.Header.Get("Content-Type"); got != "application/octet-stream" {
					t.Errorf("Content-Type %q, want application/octet-stream", got)
				}
				if !bytes.Equal(body, Pattern(n)) {
					t.Errorf("body: %d bytes, want Pattern(%d)", len(body), n)
				}
			})
		}
	}
	t.Run("default size", func(t *testing.T) {
		t.Parallel()
		_, body := get(t, s.client(t, protoH1C, true), s.url(protoH1C, "/bytes"))
		if !bytes.Equal(body, Pattern(RootBodySize)) {
			t.Errorf("body: %d bytes, want Pattern(%d), the / body", len(body), RootBodySize)
		}
	})
	bad := []struct{ query, want string }{
		{"size=-1", `size must be an integer in 0..8388608, got "-1"`},
		{"size=8388609", `size must be an integer in 0..8388608, got "8388609"`},
		{"size=1k", `size must be an integer in 0..8388608, got "1k"`},
		{"size=1&size=2", "size given 2 times"},
	}
	for _, p := range allProtos {
		c := s.client(t, p, true)
		for _, tt := range bad {
			t.Run(string(p)+"/"+tt.query, func(t *testing.T) {
				t.Parallel()
				resp, body := get(t, c, s.url(p, "/bytes?"+tt.query))
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tt.want) {
					t.Errorf("status %d %q, want 400 naming %q", resp.StatusCode, body, tt.want)
				}
			})
		}
	}
	t.Run("POST", func(t *testing.T) {
		t.Parallel()
		resp, err := s.client(t, protoH2, true).Post(s.url(protoH2, "/bytes?size=10"), "text/plain", strings.NewReader("abc"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("status %d, Allow %q: want 405, GET, HEAD", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}

// TestBytesAllocs: the body is a prefix of the pattern built once, so what a /bytes request
// allocates does not grow with its size.
func TestBytesAllocs(t *testing.T) {
	s := NewHandler(testUploadLimit)
	allocs := map[int]float64{}
	for _, n := range []int{1 << 10, MaxBytes} {
		w := newDiscardWriter()
		r, _ := http.NewRequest(http.MethodGet, "http://bench.test/bytes?size="+strconv.Itoa(n), nil)
		allocs[n] = testing.AllocsPerRun(50, func() { s.ServeHTTP(w, r) })
	}
	if allocs[MaxBytes] > allocs[1<<10] {
		t.Errorf("allocations per request by size: %v: more for %d bytes than for 1 KiB", allocs, MaxBytes)
	}
}
