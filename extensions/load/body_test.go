package load

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// rewriteAt is body with the byte at i changed, as a proxy that rewrites bytes and keeps the
// length would send it.
func rewriteAt(body string, i int) string {
	b := []byte(body)
	b[i] ^= 0x20 // another letter's case, or another printable byte
	return string(b)
}

// The comparison is the same however the body is cut into reads, frames or chunks: the first
// differing byte is found at its offset in the body, and only within the expected length.
func TestBodyCheck(t *testing.T) {
	t.Parallel()
	want := string(upstream.Pattern(upstream.RootBodySize))
	tests := []struct {
		name      string
		want      string // "": nothing expected
		got       string
		differsAt int // -1: no difference
	}{
		{"equal", want, want, -1},
		{"byte 6", want, rewriteAt(want, 6), 6},
		{"byte 0", want, rewriteAt(want, 0), 0},
		{"the last byte", want, rewriteAt(want, 4095), 4095},
		{"two bytes: the first counts", want, rewriteAt(rewriteAt(want, 3000), 7), 7},
		{"shorter, a prefix: the size says it", want, want[:4000], -1},
		{"longer, want as a prefix: the size says it", want, want + "more", -1},
		{"shorter and different", want, rewriteAt(want[:100], 50), 50},
		{"nothing expected: nothing compared", "", rewriteAt(want, 6), -1},
	}
	for _, tc := range tests {
		for _, piece := range []int{1, 5, 1000, 4096, 8192} {
			t.Run(fmt.Sprintf("%s, in pieces of %d", tc.name, piece), func(t *testing.T) {
				t.Parallel()
				c := bodyCheck{}
				if tc.want != "" {
					c.content = content{want: []byte(tc.want)}
				}
				for got := []byte(tc.got); len(got) > 0; {
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
}

// An HTTP/1.1 body is compared in place as it is read, whatever its framing, and however the
// reads cut it (a 64-byte buffer: many reads per body).
func TestReadAnswerComparesTheBody(t *testing.T) {
	t.Parallel()
	want := string(upstream.Pattern(upstream.RootBodySize))
	chunked := func(body string) string {
		return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			fmt.Sprintf("%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", 2049, body[:2049], len(body)-2049, body[2049:])
	}
	tests := []struct {
		name, wire string
		bytes      int
		differsAt  int // -1: none
	}{
		{"content-length, equal", "HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n" + want, 4096, -1},
		{"content-length, byte 6", "HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n" + rewriteAt(want, 6), 4096, 6},
		{"chunked, equal", chunked(want), 4096, -1},
		{"chunked, byte 2050 (the second chunk's second)", chunked(rewriteAt(want, 2050)), 4096, 2050},
		{"to the connection's end, byte 4095", "HTTP/1.1 200 OK\r\n\r\n" + rewriteAt(want, 4095), 4096, 4095},
		{"after an interim answer, equal", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n" + want, 4096, -1},
		{"a short body, a prefix", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n" + want[:10], 10, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// a check left over from a differing answer: readAnswer starts each body afresh
			c := bodyCheck{content: content{want: []byte(want)}, n: 99, differs: true, differsAt: 1}
			a, err := readAnswer(bufio.NewReaderSize(strings.NewReader(tc.wire), 64), &c)
			require.NoError(t, err)
			assert.Equal(t, tc.bytes, a.bytes, "bytes")
			assert.Equal(t, tc.bytes, c.n, "bytes compared")
			assert.Equal(t, tc.differsAt >= 0, c.differs, "differs")
			if tc.differsAt >= 0 {
				assert.Equal(t, tc.differsAt, c.differsAt, "differsAt")
			}
		})
	}
}

// With expect, every answer's body is compared byte for byte over h1c, h1 and h2: one of the
// right size that differs fails the check as why body, with the offset of its first differing
// byte in body_differs_at; one of the wrong size stays why size, whatever its bytes; without
// expect the size alone is checked, as before.
func TestRunComparesTheBody(t *testing.T) {
	t.Parallel()
	want := string(upstream.Pattern(upstream.RootBodySize))
	tests := []struct {
		name     string
		body     string
		expect   bool
		wantBad  string // the one why of every request; "": none
		wantDiff float64
	}{
		{"equal", want, true, "", 0},
		{"byte 6 of 4096 differs", rewriteAt(want, 6), true, "body", 6},
		{"the last byte differs", rewriteAt(want, 4095), true, "body", 4095},
		{"one byte short", want[:4095], true, "size", 0},
		{"one byte short, and differing", rewriteAt(want[:4095], 6), true, "size", 0},
		{"one byte more", want + "0", true, "size", 0},
		{"differing, not compared without expect", rewriteAt(want, 6), false, "", 0},
	}
	for _, proto := range []string{"h1c", "h1", "h2"} {
		for _, tc := range tests {
			t.Run(proto+", "+tc.name, func(t *testing.T) {
				t.Parallel()
				srv, url := serve(t, proto, bodyIs(tc.body))
				e := newTestEnv(t, roots(srv))
				expect := ""
				if tc.expect {
					expect = fmt.Sprintf("expect: %q,", want)
				}
				streams := map[string]int{"h1c": 1, "h1": 1, "h2": 4}[proto]
				r := runLoop(t, e, url, fmt.Sprintf(`{url: "URL", proto: %q, streams: %d, expectBytes: 4096, %s check: "ok"}`, proto, streams, expect), 200*time.Millisecond)
				require.Positive(t, r.Requests)
				got := e.tally()
				n := float64(r.Requests)
				assert.Equal(t, r.Requests, got.checks, "checks samples")
				if tc.wantBad == "" {
					assert.Equal(t, n, got.checksPassed, "checks passed")
					assert.Empty(t, got.bad, "bad_responses")
					assert.Empty(t, got.differsAt, "body_differs_at")
					return
				}
				assert.Zero(t, got.checksPassed, "checks passed")
				assert.Equal(t, map[string]float64{tc.wantBad: n}, got.bad, "bad_responses by why")
				if tc.wantBad != "body" {
					assert.Empty(t, got.differsAt, "body_differs_at: only for a body of the right size")
					return
				}
				require.Len(t, got.differsAt, r.Requests, "a body_differs_at sample per response")
				for _, v := range got.differsAt {
					assert.Equal(t, tc.wantDiff, v, "body_differs_at")
				}
			})
		}
	}
}

// A body that differs on a response of another status is counted for both.
func TestRunComparesTheBodyOfAnErrorStatus(t *testing.T) {
	t.Parallel()
	want := string(upstream.Pattern(upstream.RootBodySize))
	srv, url := serve(t, "h1c", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(rewriteAt(want, 9)))
	}))
	e := newTestEnv(t, roots(srv))
	r := runLoop(t, e, url, fmt.Sprintf(`{url: "URL", proto: "h1c", expect: %q, check: "ok"}`, want), 100*time.Millisecond)
	require.Positive(t, r.Requests)
	got := e.tally()
	n := float64(r.Requests)
	assert.Equal(t, map[string]float64{"status": n, "body": n}, got.bad)
	assert.Len(t, got.differsAt, r.Requests)
}

// Comparing allocates nothing: the loop reads an answer, and feeds a DATA frame, without a
// byte on the heap. Not parallel: AllocsPerRun counts the whole process's allocations.
func TestBodyCheckAllocatesNothing(t *testing.T) {
	want := string(upstream.Pattern(upstream.RootBodySize))
	for _, wire := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n" + want,
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" + want[:2048] + "\r\n800\r\n" + want[2048:] + "\r\n0\r\n\r\n",
	} {
		br := bufio.NewReaderSize(&loopReader{b: []byte(wire)}, 32<<10)
		c := bodyCheck{content: content{want: []byte(want)}}
		if n := testing.AllocsPerRun(100, func() {
			if _, err := readAnswer(br, &c); err != nil || c.differs {
				t.Fatal(err, c.differsAt)
			}
		}); n != 0 {
			t.Errorf("readAnswer of %.40q…: %v allocations per answer, want 0", wire, n)
		}
	}
	data, c := []byte(want), bodyCheck{content: content{want: []byte(want)}}
	if n := testing.AllocsPerRun(100, func() { c.n = 0; c.feed(data) }); n != 0 {
		t.Errorf("feed: %v allocations per body, want 0", n)
	}
}
