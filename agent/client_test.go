package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// writeTokenFile writes tf where a load host would keep its copy.
func writeTokenFile(t *testing.T, tf TokenFile) string {
	t.Helper()
	data, err := json.Marshal(tf)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), TokenName)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDialTrustsOnlyThePinnedCA(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	good := filepath.Join(ta.tokenDir, TokenName)
	otherPin := ta.token
	otherPin.CASHA256 = strings.Repeat("ab", 32)
	otherToken := ta.token
	otherToken.Token = strings.Repeat("0", len(ta.token.Token))
	tests := []struct {
		name, url, token string
		says             string // "": dials
	}{
		{"the token file as written", ta.base, good, ""},
		{"another CA pinned", ta.base, writeTokenFile(t, otherPin), "not the stack's CA, not trusted"},
		{"another token", ta.base, writeTokenFile(t, otherToken), "GET /v1/state: 401"}, // refused at the first call that sends it
		{"no token file", ta.base, filepath.Join(t.TempDir(), "none.json"), "copy run/agent-token.json"},
		{"http", strings.Replace(ta.base, "https", "http", 1), good, "want https://IP:PORT"},
		{"a name", "https://localhost:7443", good, "not an IP address"},
		{"no port", "https://127.0.0.1", good, "want https://IP:PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Dial(context.Background(), tt.url, tt.token)
			if err == nil {
				_, err = c.State(context.Background())
				c.Close()
			}
			if tt.says == "" && err != nil {
				t.Errorf("Dial(%s), then State: %v", tt.url, err)
			}
			if tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)) {
				t.Errorf("Dial(%s, %s), then State: %v; want an error saying %q", tt.url, tt.token, err, tt.says)
			}
		})
	}
}

// An impostor that serves the stack's CA (its hash matches: the CA is public) behind a
// certificate that CA did not sign is refused, and never sees the token.
func TestDialRefusesAnImpostor(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	caPEM, err := os.ReadFile(filepath.Join(ta.stack.RunDir, "certs", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string // each request's Authorization
	impostor := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.Header.Get("Authorization"))
		_, _ = w.Write(caPEM)
	}))
	defer impostor.Close()
	_, err = Dial(context.Background(), impostor.URL, filepath.Join(ta.tokenDir, TokenName))
	if err == nil || !strings.Contains(err.Error(), "not the pinned CA's") {
		t.Errorf("Dial to an impostor: %v; want an error saying its certificate is not the pinned CA's", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "" {
		t.Errorf("the impostor was sent %q; want one request (the CA's) with no Authorization", asked)
	}
}

func TestClientCalls(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	ctx := context.Background()
	c, err := Dial(ctx, ta.base, filepath.Join(ta.tokenDir, TokenName))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	st, err := c.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Targets["nginx"] == nil || st.Targets["nginx"].PID != os.Getpid() {
		t.Errorf("State: %+v; want nginx as the test wrote it (pid %d)", st.Targets, os.Getpid())
	}
	if st.CPUs != stateCPUs {
		t.Errorf("State: cpus %d, want the %d the stack recorded", st.CPUs, stateCPUs)
	}
	if h := c.Host(st); st.Listen == "" || h != st.Listen {
		t.Errorf("Host of a state listening on %q: %q, want that address", st.Listen, h)
	}
	if h := c.Host(&StackState{}); h != "127.0.0.1" {
		t.Errorf("Host of a state without listen: %q, want the agent's 127.0.0.1", h)
	}
	if h := c.Host(&StackState{Listen: "192.0.2.7:7443"}); h != "192.0.2.7" {
		t.Errorf("Host of a state listening on 192.0.2.7:7443: %q", h)
	}

	res, err := http.Get("http://" + ta.upstream + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var conns map[string]int64
	if err := c.Upstream(ctx, "/debug/conns", &conns); err != nil || conns["h1c"] < 2 {
		t.Errorf("Upstream conns: %v %v; want the test's connection and the agent's", conns, err)
	}
	var served map[string]map[string]struct{ Requests int64 }
	if err := c.Upstream(ctx, "/debug/served", &served); err != nil || served["h1c"]["/"].Requests != 1 {
		t.Errorf("Upstream served: %v %v; want the one request sent to /", served, err)
	}
	if err := c.Upstream(ctx, "/debug/pprof", &served); err == nil {
		t.Error("Upstream /debug/pprof: no error")
	}

	from := time.Now()
	s, err := c.StartSample(ctx, "nginx")
	if err != nil || s.ID == "" || !s.Running {
		t.Fatalf("StartSample: %+v %v", s, err)
	}
	if burn(700*time.Millisecond) == 0 {
		t.Fatal("burn spun no loop")
	}
	to := time.Now()
	stopped, err := c.StopSample(ctx, s.ID)
	if err != nil || stopped.Resources.TargetCPUSeconds <= 0 {
		t.Fatalf("StopSample: %+v %v; want the CPU burnt", stopped, err)
	}
	w, ok, err := c.Window(ctx, s.ID, from, to)
	if err != nil || !ok || w.Window.CPUSeconds <= 0 {
		t.Errorf("Window: %+v %v %v; want the CPU burnt in it", w, ok, err)
	}
	if _, err := c.StopSample(ctx, "feed"); err == nil || !strings.Contains(err.Error(), "DELETE /v1/samples/feed: 404 Not Found: sampler \"feed\": no such sampler") {
		t.Errorf("StopSample of an unknown id: %v; want the call, the status and the agent's reason", err)
	}

	if _, err := c.Restart(ctx, "caddy"); err == nil || !strings.Contains(err.Error(), "POST /v1/targets/caddy/restart: 409 Conflict") || !strings.Contains(err.Error(), "caddy is not up") {
		t.Errorf("Restart of a target that is not up: %v; want the call, 409 and the agent's reason", err)
	}

	path, err := c.CAFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want, _ := os.ReadFile(filepath.Join(ta.stack.RunDir, "certs", "ca.pem"))
	if len(got) == 0 || !bytes.Equal(got, want) {
		t.Errorf("CAFile wrote %d bytes, not the stack's CA", len(got))
	}
	if _, err := stack.NewProber("bench.test", "127.0.0.1", path); err != nil {
		t.Errorf("the CA file does not make a prober: %v", err)
	}
}
