package http3

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// withBodies defines scenarios/lib/bodies.js's bodies (ROOT_BODY, …) in the VU's global scope,
// as the scripts import them. The module imports nothing, so it runs as a script once its
// export keywords are dropped.
func withBodies(t *testing.T, e *testEnv) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "lib", "bodies.js"))
	require.NoError(t, err)
	_, err = e.run(regexp.MustCompile(`(?m)^export `).ReplaceAllString(string(src), ""))
	require.NoError(t, err)
}

// The load scripts check every body of / byte for byte as scenarios/lib/checks.js does,
// requesting it as text and comparing it with bodies.js's ROOT_BODY in one string comparison;
// the probes request binary and compare the bytes. Over h3 the responses come from this module,
// and must serve both the same as k6/http does: a text body that is the expected string,
// equal to ROOT_BODY exactly when its bytes are, from http3.get and http3.batch alike, and a
// binary body whose bytes are the server's.
func TestBodyComparedByteForByte(t *testing.T) {
	t.Parallel()
	text := `{responseType: "text"}`
	tests := []struct {
		name, js string
		want     any
	}{
		{"text body of / is ROOT_BODY", `http3.get("BASE/", ` + text + `).body === ROOT_BODY`, true},
		{"a rewritten body is not", `http3.get("BASE/rewritten?at=6", ` + text + `).body === ROOT_BODY`, false},
		{"a rewritten body keeps its length", `http3.get("BASE/rewritten?at=6", ` + text + `).body.length`, float64(upstream.RootBodySize)},
		{
			"a rewritten body differs where it was rewritten", `(() => {
				const b = http3.get("BASE/rewritten?at=6", ` + text + `).body;
				for (let i = 0; i < b.length; i++) if (b[i] !== ROOT_BODY[i]) return i;
				return -1;
			})()`, 6.0,
		},
		{
			"batch: each text body compared", `http3.batch([
				["GET", "BASE/", null, ` + text + `],
				["GET", "BASE/rewritten?at=4095", null, ` + text + `],
				["GET", "BASE/", null, ` + text + `],
			]).map((r) => r.body === ROOT_BODY)`, []any{true, false, true},
		},
		{
			"binary body is ROOT_BODY's bytes", `(() => {
				const b = new Uint8Array(http3.get("BASE/", {responseType: "binary"}).body);
				if (b.length !== ROOT_BODY.length) return "length " + b.length;
				for (let i = 0; i < b.length; i++) if (b[i] !== ROOT_BODY.charCodeAt(i)) return "byte " + i;
				return "same";
			})()`, "same",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			withBodies(t, e)
			var got any
			e.result(t, tc.js, &got)
			assert.Equal(t, tc.want, got)
		})
	}
}
