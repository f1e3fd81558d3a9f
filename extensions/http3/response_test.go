package http3

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResponse(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, js string
		want     any
	}{
		{"proto", `http3.get("BASE/").proto`, "HTTP/3.0"},
		{"status_text", `http3.get("BASE/").status_text`, "200 OK"},
		{"headers", `http3.get("BASE/json").headers["Content-Type"]`, "application/json"},
		{"url", `http3.get("BASE/json").url === "BASE/json"`, true},
		{"request", `http3.post("BASE/upload", "abc").request.body`, "abc"},
		{"remote_ip", `http3.get("BASE/").remote_ip`, "127.0.0.1"},
		{"json()", `http3.get("BASE/json").json().service`, "proxybench-upstream"},
		{"json(selector)", `http3.get("BASE/json").json("items.2.name")`, "gamma"},
		{"json(missing selector)", `http3.get("BASE/json").json("nope") === undefined`, true},
		{"binary body", `(() => { const b = http3.get("BASE/binary", {responseType: "binary"}).body;
			return b instanceof ArrayBuffer && Array.from(new Uint8Array(b)).join(","); })()`, "0,1,2,254,255"},
		{"binary json()", `http3.get("BASE/json", {responseType: "binary"}).json().version`, 1.0},
		{"text body", `typeof http3.get("BASE/").body`, "string"},
		{
			"timings keys", `Object.keys(http3.get("BASE/").timings).sort().join(",")`,
			"blocked,connecting,duration,looking_up,receiving,sending,tls_handshaking,waiting",
		},
		{"a failed request has a null body", `http3.get("BASE/slow?d=2s", {timeout: "50ms"}).body`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			var got any
			e.result(t, tc.js, &got)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestResponseJSONErrors(t *testing.T) {
	t.Parallel()

	tests := []struct{ name, js, err string }{
		{"null body", `http3.get("BASE/json", {responseType: "none"}).json()`, "http3 response.json(): the body is null"},
		{"not JSON", `http3.get("BASE/healthz").json()`, "invalid character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			_, err := e.run(tc.js)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}
