package load

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// The tests of bodies of any size, as the body-size sweep moves them: downloads of /bytes
// compared against the text they repeat (expectRepeat), uploads of a body written from one run
// of it (method POST), and downloads a proxy cuts short (body_cut).

// patternText is what the upstream's bodies repeat (lib/bodies.js PATTERN).
var patternText = string(upstream.Pattern(62))

// A repeated body is compared with one run of its text, however long the body and however its
// reads cut it: the first differing byte is found at its offset in the body.
func TestBodyCheckRepeated(t *testing.T) {
	t.Parallel()
	const size = 3*repeatRun + 1000
	body := upstream.Pattern(size)
	changed := func(at ...int) []byte {
		b := bytes.Clone(body)
		for _, i := range at {
			b[i] ^= 0x01
		}
		return b
	}
	// "abc" repeated, with the byte at i (-1: none) changed: a period that divides no run
	abc := func(i int) []byte {
		b := []byte(strings.Repeat("abc", size/3))
		if i >= 0 {
			b[i] = 'x'
		}
		return b
	}
	tests := []struct {
		name      string
		text      string
		got       []byte
		differsAt int // -1: none
	}{
		{"equal", patternText, body, -1},
		{"empty", patternText, nil, -1},
		{"a prefix: the size says it", patternText, body[:size-10], -1},
		{"byte 0", patternText, changed(0), 0},
		{"the first byte of the second repeat", patternText, changed(62), 62},
		{"at the end of the first run", patternText, changed(repeatRun + 61), repeatRun + 61},
		{"deep in the body: the first counts", patternText, changed(2*repeatRun+999, size-1), 2*repeatRun + 999},
		{"another text", "abc", abc(-1), -1},
		{"another text, byte 150001", "abc", abc(150001), 150001},
	}
	for _, tc := range tests {
		for _, piece := range []int{1, 7, 4096, repeatRun + 5, size} {
			t.Run(fmt.Sprintf("%s, in pieces of %d", tc.name, piece), func(t *testing.T) {
				t.Parallel()
				c := bodyCheck{content: repeating(tc.text)}
				for got := tc.got; len(got) > 0; {
					n := min(piece, len(got))
					c.feed(got[:n])
					got = got[n:]
				}
				assert.Equal(t, len(tc.got), c.n, "bytes seen")
				assert.Equal(t, tc.differsAt >= 0, c.differs, "differs")
				if tc.differsAt >= 0 {
					assert.Equal(t, tc.differsAt, c.differsAt, "differsAt")
				}
			})
		}
	}
	// what the loop holds to compare a body of any size: one run of its text
	if got := len(repeating(patternText).want); got > repeatRun+2*62 {
		t.Errorf("repeating(%d-byte text) holds %d bytes, want at most %d", 62, got, repeatRun+2*62)
	}
}

// sizeEnv is the upstream's own routes (/bytes, /upload) behind a test server of proto.
func sizeEnv(t *testing.T, proto string, h http.Handler) (*testEnv, string) {
	t.Helper()
	srv, url := serve(t, proto, h)
	return newTestEnv(t, roots(srv)), url
}

// Downloads of /bytes of every size, from the upstream's own handler, pass over h1c, h1 and h2;
// one whose byte deep in the body was changed (a proxy rewriting it, same length) fails as why
// body at that byte's offset.
func TestRunComparesARepeatedBody(t *testing.T) {
	t.Parallel()
	up := upstream.NewHandler(upstream.DefaultUploadLimit)
	const at = 5_000_001
	rewrite := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b := upstream.Pattern(upstream.MaxBytes)
		b[at] ^= 0x01
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
	tests := []struct {
		name     string
		h        http.Handler
		size     int
		wantBody bool // bad_responses{why:body} at at
	}{
		{"0 B", up, 0, false},
		{"1 KiB", up, 1 << 10, false},
		{"1 MiB", up, 1 << 20, false},
		{"8 MiB", up, upstream.MaxBytes, false},
		{"8 MiB, a byte rewritten", rewrite, upstream.MaxBytes, true},
	}
	for _, proto := range []string{"h1c", "h1", "h2"} {
		for _, tc := range tests {
			t.Run(proto+", "+tc.name, func(t *testing.T) {
				t.Parallel()
				e, url := sizeEnv(t, proto, tc.h)
				opts := fmt.Sprintf(`{url: "URLbytes?size=%d", proto: %q, expectBytes: %d, expectRepeat: %q, check: "ok"}`, tc.size, proto, tc.size, patternText)
				r := runLoop(t, e, url, opts, 300*time.Millisecond)
				require.Positive(t, r.Requests)
				got := e.tally()
				n := float64(r.Requests)
				assert.Zero(t, got.sums["body_cut"], "body_cut")
				if !tc.wantBody {
					assert.Equal(t, n, got.checksPassed, "checks passed")
					assert.Empty(t, got.bad, "bad_responses")
					return
				}
				assert.Equal(t, map[string]float64{"body": n}, got.bad, "bad_responses by why")
				require.Len(t, got.differsAt, r.Requests)
				assert.Equal(t, float64(at), got.differsAt[0], "body_differs_at")
			})
		}
	}
}

// uploadSeen is /upload as the upstream answers it ({"bytes":N}), after checking that the body
// it read is the pattern, byte for byte (400 otherwise): the loop sends what it says it sends.
func uploadSeen() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || r.Method != http.MethodPost || r.ContentLength != int64(len(b)) || !bytes.Equal(b, upstream.Pattern(len(b))) {
			http.Error(w, fmt.Sprintf("%s with Content-Length %d: %d bytes, not the pattern's (%v)", r.Method, r.ContentLength, len(b), err), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `{"bytes":%d}`, len(b))
	})
}

// Uploads of every size pass over h1c, h1 and h2 (h2 with several streams, and under windows
// smaller than a body, so that every body waits for the server's WINDOW_UPDATEs): the server
// reads the pattern, byte for byte, and the answer {"bytes":N} is compared as any body.
func TestRunUploads(t *testing.T) {
	t.Parallel()
	smallWindows := func(s *http.Server) {
		s.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10}
	}
	for _, tc := range []struct {
		proto   string
		streams int
		before  []func(*http.Server)
	}{
		{"h1c", 1, nil},
		{"h1", 1, nil},
		{"h2", 1, nil},
		{"h2", 4, []func(*http.Server){smallWindows}},
	} {
		for _, size := range []int{0, 1 << 10, 64<<10 + 1, 1 << 20, upstream.MaxBytes} {
			t.Run(fmt.Sprintf("%s, %d streams, %d bytes", tc.proto, tc.streams, size), func(t *testing.T) {
				t.Parallel()
				srv, url := serve(t, tc.proto, uploadSeen(), tc.before...)
				e := newTestEnv(t, roots(srv))
				answer := fmt.Sprintf(`{"bytes":%d}`, size)
				opts := fmt.Sprintf(`{url: "URLupload", proto: %q, streams: %d, method: "POST", uploadBytes: %d, uploadText: %q, expect: %q, check: "ok"}`,
					tc.proto, tc.streams, size, patternText, answer)
				r := runLoop(t, e, url, opts, 300*time.Millisecond)
				require.Positive(t, r.Requests)
				got := e.tally()
				assert.Equal(t, float64(r.Requests), got.checksPassed, "checks passed: %v", got.bad)
				assert.Equal(t, 1, r.Connections, "every upload on the one connection")
			})
		}
	}
}

// The upstream's own /upload counts what the loop sends; a body over its limit is refused (413)
// and fails the check, never a hang.
func TestRunUploadsToTheUpstream(t *testing.T) {
	t.Parallel()
	up := upstream.NewHandler(1 << 20)
	for _, proto := range []string{"h1c", "h2"} {
		for _, tc := range []struct {
			size    int
			wantBad string
		}{{1 << 20, ""}, {1<<20 + 1, "status"}} {
			t.Run(fmt.Sprintf("%s, %d bytes", proto, tc.size), func(t *testing.T) {
				t.Parallel()
				e, url := sizeEnv(t, proto, up)
				opts := fmt.Sprintf(`{url: "URLupload", proto: %q, method: "POST", uploadBytes: %d, uploadText: %q, expect: %q, check: "ok"}`,
					proto, tc.size, patternText, fmt.Sprintf(`{"bytes":%d}`, tc.size))
				r := runLoop(t, e, url, opts, 300*time.Millisecond)
				require.Positive(t, r.Requests)
				got := e.tally()
				if tc.wantBad == "" {
					assert.Equal(t, float64(r.Requests), got.checksPassed, "checks passed: %v", got.bad)
					return
				}
				assert.Zero(t, got.checksPassed)
				assert.Positive(t, got.bad[tc.wantBad], "bad_responses: %v", got.bad)
			})
		}
	}
}

// cutAt answers a body of size bytes (Content-Length set) of which it sends only the first at,
// then breaks the connection (HTTP/1.1) or resets the stream (h2): a proxy that gave up on a
// large body mid-way.
func cutAt(size, at int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		_, _ = w.Write(upstream.Pattern(at))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
}

// A download whose body ends before its size is counted in body_cut, whether its connection
// broke mid-body or it came whole and short (chunked); one whose answer never began is not.
func TestRunCountsCutBodies(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	shortChunked := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(upstream.Pattern(size / 2))
		w.(http.Flusher).Flush() // no Content-Length: chunked, and whole
	})
	tests := []struct {
		name    string
		h       http.Handler
		wantCut bool
		failed  bool // the requests fail (no whole answer)
	}{
		{"the connection breaks mid-body", cutAt(size, 100_000), true, true},
		{"a whole answer, shorter", shortChunked, true, false},
		{"no answer at all", hang, false, true},
	}
	for _, proto := range []string{"h1c", "h1", "h2"} {
		for _, tc := range tests {
			t.Run(proto+", "+tc.name, func(t *testing.T) {
				t.Parallel()
				e, url := sizeEnv(t, proto, tc.h)
				opts := fmt.Sprintf(`{url: "URLbytes", proto: %q, expectBytes: %d, expectRepeat: %q, check: "ok", timeout: 200}`, proto, size, patternText)
				r := runLoop(t, e, url, opts, 300*time.Millisecond)
				require.Positive(t, r.Requests)
				got := e.tally()
				assert.Zero(t, got.checksPassed)
				if tc.failed {
					assert.Equal(t, r.Requests, r.Failed, "failed requests")
				}
				if !tc.wantCut {
					assert.Zero(t, got.sums["body_cut"], "body_cut")
					return
				}
				assert.Equal(t, float64(r.Requests), got.sums["body_cut"], "body_cut: every request")
			})
		}
	}
}

// Only run() uploads: fresh() and open() refuse a client with a body, naming the option.
func TestUploadsRunOnly(t *testing.T) {
	t.Parallel()
	srv, url := serve(t, "h1c", uploadSeen())
	e := newTestEnv(t, roots(srv))
	opts := replaceURL(fmt.Sprintf(`{url: "URLupload", proto: "h1c", method: "POST", uploadBytes: 10, uploadText: %q, check: "ok"}`, patternText), url)
	now := time.Now().UnixMilli()
	for call, js := range map[string]string{
		"fresh": fmt.Sprintf("load.client(%s).fresh(1, %d)", opts, now+1000),
		"open":  fmt.Sprintf("load.client(%s).open(%d, %d, 10)", opts, now, now+100),
	} {
		_, err := e.rt.RunOnEventLoop(js)
		require.Error(t, err, call)
		assert.Contains(t, err.Error(), call+": the native loop uploads in run() only")
	}
}
