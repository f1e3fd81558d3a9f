package upstream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// jsonDocSize is the /json size upstream/README.md documents: scenarios check it.
const jsonDocSize = 290

func TestStaticRoutes(t *testing.T) {
	t.Parallel()
	s := newStack(t)

	tests := []struct {
		path        string
		status      int
		contentType string
		body        []byte
	}{
		{"/", http.StatusOK, "application/octet-stream", Pattern(RootBodySize)},
		{"/json", http.StatusOK, "application/json", []byte(jsonDoc)},
		{"/healthz", http.StatusOK, "text/plain; charset=utf-8", []byte("ok")},
		{"/nope", http.StatusNotFound, "text/plain; charset=utf-8", []byte("404 page not found\n")},
		{"/json/", http.StatusNotFound, "text/plain; charset=utf-8", []byte("404 page not found\n")},
	}
	for _, p := range allProtos {
		c := s.client(t, p, true)
		for _, tt := range tests {
			t.Run(string(p)+tt.path, func(t *testing.T) {
				t.Parallel()
				resp, body := get(t, c, s.url(p, tt.path))
				if resp.StatusCode != tt.status {
					t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
				}
				if resp.Proto != p.wantProto() {
					t.Errorf("proto = %s, want %s", resp.Proto, p.wantProto())
				}
				if got := resp.Header.Get("Content-Type"); got != tt.contentType {
					t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
				}
				if got, want := resp.Header.Get("Content-Length"), strconv.Itoa(len(tt.body)); got != want {
					t.Errorf("Content-Length = %q, want %q", got, want)
				}
				if !bytes.Equal(body, tt.body) {
					t.Errorf("body = %d bytes %.40q…, want %d bytes %.40q…", len(body), body, len(tt.body), tt.body)
				}
			})
		}
	}
}

func TestBodies(t *testing.T) {
	t.Parallel()
	if len(rootResponse.body) != 4096 {
		t.Errorf("/ body is %d bytes, want 4096", len(rootResponse.body))
	}
	if len(jsonDoc) != jsonDocSize {
		t.Errorf("/json body is %d bytes, want %d: update jsonDocSize and the README together", len(jsonDoc), jsonDocSize)
	}
	if !json.Valid([]byte(jsonDoc)) {
		t.Errorf("/json body is not valid JSON: %s", jsonDoc)
	}
	// Every /stream chunk is a prefix of the / body's pattern.
	if !bytes.Equal(Pattern(1 << 20)[:RootBodySize], rootResponse.body) {
		t.Error("the / body is not a prefix of the /stream pattern")
	}
}

// TestHotPathAllocs guards "no per-request allocation" on / and /json.
func TestHotPathAllocs(t *testing.T) {
	s := NewHandler(testUploadLimit)
	for _, path := range []string{"/", "/json", "/healthz"} {
		t.Run(path, func(t *testing.T) {
			w := newDiscardWriter()
			r, _ := http.NewRequest(http.MethodGet, "http://bench.test"+path, nil)
			if n := testing.AllocsPerRun(100, func() { s.ServeHTTP(w, r) }); n != 0 {
				t.Errorf("%s allocates %.1f times per request, want 0", path, n)
			}
		})
	}
}
