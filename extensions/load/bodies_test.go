package load

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// repoRoot is the proxybench clone this module lives in.
const repoRoot = "../.."

// jsScope evaluates expressions in the scope of a script.
type jsScope struct {
	t  *testing.T
	vm *sobek.Runtime
}

func (s jsScope) eval(expr string) any {
	s.t.Helper()
	v, err := s.vm.RunString(expr)
	require.NoError(s.t, err, expr)
	return v.Export()
}

func (s jsScope) str(expr string) string {
	s.t.Helper()
	v, ok := s.eval(expr).(string)
	require.True(s.t, ok, "%s is not a string", expr)
	return v
}

func (s jsScope) num(expr string) int64 {
	s.t.Helper()
	v, ok := s.eval(expr).(int64)
	require.True(s.t, ok, "%s is not an integer", expr)
	return v
}

// bodiesJS evaluates scenarios/lib/bodies.js, the bodies every script and the native loop
// compare with, as k6 would. The module imports nothing, so it runs as a script once its
// export keywords are dropped.
func bodiesJS(t *testing.T) jsScope {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "scenarios", "lib", "bodies.js"))
	require.NoError(t, err)
	vm := sobek.New()
	_, err = vm.RunScript("bodies.js", regexp.MustCompile(`(?m)^export `).ReplaceAllString(string(src), ""))
	require.NoError(t, err, "bodies.js must stand alone: no imports, only definitions")
	return jsScope{t, vm}
}

// The bodies of scenarios/lib/bodies.js are the upstream's, byte for byte: a change on either
// side fails here, not as every check of every run failing.
func TestBodiesAreTheUpstreams(t *testing.T) {
	t.Parallel()
	js := bodiesJS(t)
	// the upstream's own handlers: the bodies are compared with what it serves, not with a
	// copy of its source
	srv := httptest.NewServer(upstream.NewHandler(upstream.DefaultUploadLimit))
	t.Cleanup(srv.Close)
	base := srv.URL
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) []byte {
		res, err := client.Get(base + path)
		require.NoError(t, err, path)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err, path)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, b)
		return b
	}
	assert.Equal(t, len(get("/")), int(js.num("ROOT_BYTES")), "ROOT_BYTES is the size of /")

	type body struct {
		name, path string
		want       func(served []byte) string // bodies.js's body, given what was served
	}
	tests := []body{
		{"/ is ROOT_BODY", "/", func([]byte) string { return js.str("ROOT_BODY") }},
		{"/json is JSON_BODY", "/json", func([]byte) string { return js.str("JSON_BODY") }},
	}
	for _, n := range []int{1, 61, 62, 63, 100, 4096, 5000} {
		tests = append(tests, body{
			fmt.Sprintf("/stream chunks of %d bytes are streamChunk(%d)", n, n),
			fmt.Sprintf("/stream?chunks=3&chunk_bytes=%d&interval_ms=0", n),
			func([]byte) string { return strings.Repeat(js.str(fmt.Sprintf("streamChunk(%d)", n)), 3) },
		})
	}
	for _, n := range []int{0, 1, 62, 4096, 65536, 100000} {
		tests = append(tests, body{
			fmt.Sprintf("/bytes?size=%d is pattern(%d)", n, n),
			fmt.Sprintf("/bytes?size=%d", n),
			func([]byte) string { return js.str(fmt.Sprintf("pattern(%d)", n)) },
		})
	}
	ts := regexp.MustCompile(`"ts":(\d+)`) // the one part of an event that is not fixed
	tests = append(tests, body{
		"/sse events are sseTick(seq, ts)", "/sse?count=3&interval_ms=0",
		func(served []byte) string {
			var want strings.Builder
			for seq, m := range ts.FindAllSubmatch(served, -1) {
				want.WriteString(js.str(fmt.Sprintf("sseTick(%d, %s)", seq, m[1])))
			}
			return want.String()
		},
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			served := get(tc.path)
			want := []byte(tc.want(served))
			if !bytes.Equal(served, want) {
				at := min(len(served), len(want))
				for i := range at {
					if served[i] != want[i] {
						at = i
						break
					}
				}
				t.Fatalf("%s: the upstream served %d bytes, bodies.js has %d; first difference at byte %d: served %q, bodies.js %q",
					tc.path, len(served), len(want), at, clipAt(served, at), clipAt(want, at))
			}
		})
	}
}

// clipAt is up to 20 bytes of b from at, for a message.
func clipAt(b []byte, at int) []byte {
	return b[min(at, len(b)):min(at+20, len(b))]
}
