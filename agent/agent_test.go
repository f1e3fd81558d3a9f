package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRefusals(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	tok := ta.token.Token
	oversized := `{"target":"` + strings.Repeat("n", MaxBody) + `"}`
	tests := []struct {
		name         string
		method, path string
		body, auth   string
		status       int
		says         string // in the answer
	}{
		{"no token", "GET", "/v1/state", "", "", http.StatusUnauthorized, "bearer token"},
		{"wrong token", "GET", "/v1/state", "", strings.Repeat("0", len(tok)), http.StatusUnauthorized, "bearer token"},
		{"token prefix", "GET", "/v1/upstream/conns", "", tok[:len(tok)-1], http.StatusUnauthorized, "bearer token"},
		{"no token, unknown path", "GET", "/v1/nothing", "", "", http.StatusUnauthorized, "bearer token"},
		// the CA alone is public (a load host pins it before it sends the token): every other
		// endpoint, and the CA's path by another method, wants the token
		{"no token, the CA", "GET", "/v1/ca", "", "", http.StatusOK, "BEGIN CERTIFICATE"},
		{"no token, the CA by POST", "POST", "/v1/ca", "", "", http.StatusUnauthorized, "bearer token"},
		{"no token, the CA's path below", "GET", "/v1/ca/x", "", "", http.StatusUnauthorized, "bearer token"},
		{"no token, upstream served", "GET", "/v1/upstream/served", "", "", http.StatusUnauthorized, "bearer token"},
		{"no token, upstream conns", "GET", "/v1/upstream/conns", "", "", http.StatusUnauthorized, "bearer token"},
		{"no token, start a sampler", "POST", "/v1/samples", `{"target":"nginx"}`, "", http.StatusUnauthorized, "bearer token"},
		{"no token, read a sampler", "GET", "/v1/samples/feed", "", "", http.StatusUnauthorized, "bearer token"},
		{"no token, stop a sampler", "DELETE", "/v1/samples/feed", "", "", http.StatusUnauthorized, "bearer token"},
		{"no token, restart", "POST", "/v1/targets/nginx/restart", "", "", http.StatusUnauthorized, "bearer token"},
		{"bad target to sample", "POST", "/v1/samples", `{"target":"nginx;reboot"}`, tok, http.StatusBadRequest, "direct, caddy"},
		{"bad target to restart", "POST", "/v1/targets/..%2fetc/restart", "", tok, http.StatusBadRequest, "not one of targets.json's"},
		{"target not up", "POST", "/v1/targets/caddy/restart", "", tok, http.StatusConflict, "caddy is not up"},
		{"oversized body", "POST", "/v1/samples", oversized, tok, http.StatusRequestEntityTooLarge, "over 65536 bytes"},
		{"unknown field", "POST", "/v1/samples", `{"target":"nginx","pid":1}`, tok, http.StatusBadRequest, "unknown field"},
		{"two values", "POST", "/v1/samples", `{"target":"nginx"}{}`, tok, http.StatusBadRequest, "more than one"},
		{"no body", "POST", "/v1/samples", "", tok, http.StatusBadRequest, "request body"},
		{"unknown sampler", "GET", "/v1/samples/feed", "", tok, http.StatusNotFound, "no such sampler"},
		{"unknown path", "GET", "/v1/nothing", "", tok, http.StatusNotFound, "not found"},
		{"wrong method", "POST", "/v1/state", "", tok, http.StatusMethodNotAllowed, "not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := ta.do(t, tt.method, tt.path, tt.body, tt.auth)
			if status != tt.status || !strings.Contains(strings.ToLower(string(body)), strings.ToLower(tt.says)) {
				t.Errorf("%s %s: %d %s; want %d saying %q", tt.method, tt.path, status, body, tt.status, tt.says)
			}
		})
	}
}

func TestTokenFileIsTheOwners(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	fi, err := os.Stat(filepath.Join(ta.tokenDir, TokenName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	if len(ta.token.Token) != 2*tokenBytes {
		t.Errorf("token %d hex digits, want %d", len(ta.token.Token), 2*tokenBytes)
	}
}

func TestStateIsTheFile(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	path := filepath.Join(ta.stack.RunDir, "state.json")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	status, got := ta.do(t, "GET", "/v1/state", "", ta.token.Token)
	if status != http.StatusOK || !bytes.Equal(got, want) {
		t.Errorf("GET /v1/state: %d %s; want 200 and the file:\n%s", status, got, want)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	status, got = ta.do(t, "GET", "/v1/state", "", ta.token.Token)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(got), "no stack is up") {
		t.Errorf("GET /v1/state with no stack: %d %s; want 503 saying no stack is up", status, got)
	}
}

func TestCAIsThePinnedOne(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	status, got := ta.do(t, "GET", "/v1/ca", "", "") // public: no token
	if status != http.StatusOK {
		t.Fatalf("GET /v1/ca: %d %s", status, got)
	}
	b, _ := pem.Decode(got)
	if b == nil {
		t.Fatalf("GET /v1/ca: no PEM: %s", got)
	}
	sum := sha256.Sum256(b.Bytes)
	if hex.EncodeToString(sum[:]) != ta.token.CASHA256 {
		t.Errorf("the CA served hashes to %x, the token file pins %s", sum, ta.token.CASHA256)
	}
	onDisk, err := os.ReadFile(filepath.Join(ta.stack.RunDir, "certs", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, onDisk) {
		t.Error("the CA served is not the stack's run/certs/ca.pem")
	}
}

func TestUpstreamCounters(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	// three requests to / over one connection, straight to the upstream
	c := &http.Client{}
	for range 3 {
		res, err := c.Get("http://" + ta.upstream + "/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	c.CloseIdleConnections()
	status, body := ta.do(t, "GET", "/v1/upstream/served", "", ta.token.Token)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/upstream/served: %d %s", status, body)
	}
	var served map[string]map[string]struct{ Requests int64 }
	if err := json.Unmarshal(body, &served); err != nil {
		t.Fatal(err)
	}
	if n := served["h1c"]["/"].Requests; n != 3 {
		t.Errorf("served h1c / = %d, want the 3 sent: %s", n, body)
	}
	// each reading is one connection more, the agent's own
	conns := func() int64 {
		status, body := ta.do(t, "GET", "/v1/upstream/conns", "", ta.token.Token)
		var c map[string]int64
		if err := json.Unmarshal(body, &c); status != http.StatusOK || err != nil {
			t.Fatalf("GET /v1/upstream/conns: %d %s %v", status, body, err)
		}
		return c["h1c"]
	}
	first := conns()
	if second := conns(); first < 3 || second != first+1 {
		t.Errorf("conns h1c %d then %d: want at least 3 (the test's, two of the agent's), then one more", first, second)
	}
}
