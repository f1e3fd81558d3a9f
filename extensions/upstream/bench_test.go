package upstream

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// discardWriter is the least a handler can write to: unlike
// httptest.ResponseRecorder it allocates nothing, so the benchmarks measure
// the handler alone.
type discardWriter struct {
	h http.Header
	n int
}

func newDiscardWriter() *discardWriter { return &discardWriter{h: make(http.Header, 4)} }

func (d *discardWriter) Header() http.Header { return d.h }

func (d *discardWriter) Write(p []byte) (int, error) {
	d.n += len(p)
	return len(p), nil
}

func (d *discardWriter) WriteHeader(int) {}

func benchHandler(b *testing.B, path string) {
	s := NewHandler(DefaultUploadLimit)
	w := newDiscardWriter()
	r, err := http.NewRequest(http.MethodGet, "http://bench.test"+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.ServeHTTP(w, r)
	}
}

func BenchmarkRoot(b *testing.B) { benchHandler(b, "/") }

func BenchmarkJSON(b *testing.B) { benchHandler(b, "/json") }

// BenchmarkRootLoopback is / through net/http over a real loopback
// connection: what a client sees, net/http's own cost included.
func BenchmarkRootLoopback(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := Serve(Listeners{H1C: ln}, Config{UploadLimit: DefaultUploadLimit})
	b.Cleanup(srv.Close)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	url := "http://" + ln.Addr().String() + "/"
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}
