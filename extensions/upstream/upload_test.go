package upstream

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// unsized hides a reader's length so the client sends it chunked (HTTP/1.1)
// or without a content-length (HTTP/2).
type unsized struct{ io.Reader }

func TestUpload(t *testing.T) {
	t.Parallel()
	s := newStack(t)

	tests := []struct {
		name    string
		method  string
		size    int
		chunked bool
		// expect sends Expect: 100-continue, so the body waits for the
		// server's verdict: without it a client still writing a body the
		// server has refused unread may see its write reset.
		expect bool
		status int
		body   string
	}{
		{"post empty", http.MethodPost, 0, false, false, http.StatusOK, `{"bytes":0}`},
		{"post", http.MethodPost, 50_000, false, false, http.StatusOK, `{"bytes":50000}`},
		{"put", http.MethodPut, 1234, false, false, http.StatusOK, `{"bytes":1234}`},
		{"chunked", http.MethodPost, 40_000, true, false, http.StatusOK, `{"bytes":40000}`},
		{"expect continue", http.MethodPost, 3000, false, true, http.StatusOK, `{"bytes":3000}`},
		{"at the limit", http.MethodPost, testUploadLimit, false, false, http.StatusOK, fmt.Sprintf(`{"bytes":%d}`, testUploadLimit)},
		{"chunked at the limit", http.MethodPost, testUploadLimit, true, false, http.StatusOK, fmt.Sprintf(`{"bytes":%d}`, testUploadLimit)},
		{"over the limit", http.MethodPost, testUploadLimit + 1, false, true, http.StatusRequestEntityTooLarge, "limit of 65536 bytes"},
		{"chunked over the limit", http.MethodPost, testUploadLimit + 1, true, false, http.StatusRequestEntityTooLarge, "limit of 65536 bytes"},
	}
	for _, p := range allProtos {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				// A fresh connection per case: a 413 may close it.
				c := s.client(t, p, false)
				var body io.Reader = bytes.NewReader(Pattern(tt.size))
				if tt.chunked {
					body = unsized{body}
				}
				req, err := http.NewRequest(tt.method, s.url(p, "/upload"), body)
				if err != nil {
					t.Fatal(err)
				}
				if tt.expect {
					req.Header.Set("Expect", "100-continue")
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("%s /upload: %v", tt.method, err)
				}
				defer resp.Body.Close()
				got, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tt.status {
					t.Fatalf("status = %d (%s), want %d", resp.StatusCode, got, tt.status)
				}
				if tt.status == http.StatusOK {
					if string(got) != tt.body {
						t.Errorf("body = %s, want %s", got, tt.body)
					}
					if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
						t.Errorf("Content-Type = %q, want application/json", ct)
					}
				} else if !strings.Contains(string(got), tt.body) {
					t.Errorf("body = %q, want it to contain %q", got, tt.body)
				}
			})
		}
	}
}

// TestUploadRaw writes requests by hand: chunked framing the server is
// known to see as such, and a declared length refused before its body.
func TestUploadRaw(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	tests := []struct {
		name   string
		header string
		chunks []int // nil: send no body at all
		status string
		body   string
	}{
		{"three chunks", "Transfer-Encoding: chunked", []int{1000, 1, 30000}, "200", `{"bytes":31001}`},
		{"chunked over by one", "Transfer-Encoding: chunked", []int{testUploadLimit, 1}, "413", "limit of 65536 bytes"},
		{"declared over, body never sent", fmt.Sprintf("Content-Length: %d", testUploadLimit+1), nil, "413", "limit of 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", s.h1cAddr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			w := bufio.NewWriter(conn)
			fmt.Fprintf(w, "POST /upload HTTP/1.1\r\nHost: %s\r\n%s\r\n\r\n", testHost, tt.header)
			for _, n := range tt.chunks {
				fmt.Fprintf(w, "%x\r\n%s\r\n", n, Pattern(n))
			}
			if tt.chunks != nil {
				fmt.Fprint(w, "0\r\n\r\n")
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if !strings.HasPrefix(resp.Status, tt.status) || !strings.Contains(string(got), tt.body) {
				t.Errorf("got %s %q, want %s with %q", resp.Status, got, tt.status, tt.body)
			}
		})
	}
}

func TestUploadMethods(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	c := s.client(t, protoH1C, true)
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(method, s.url(protoH1C, "/upload"), nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("status = %d, want 405", resp.StatusCode)
			}
			if allow := resp.Header.Get("Allow"); allow != "POST, PUT" {
				t.Errorf("Allow = %q, want %q", allow, "POST, PUT")
			}
		})
	}
}
