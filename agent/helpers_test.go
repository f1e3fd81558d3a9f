package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/extensions/upstream"
	"github.com/proxybench/proxybench/stack"
)

// testAgent is the agent as `make agent` runs it (ListenAndServe) on 127.0.0.1:0, over a stack
// whose state names this test process as nginx and a real upstream as direct, on an address
// of its own (stackAddr, as STACK_LISTEN gives one) rather than targets.json's.
type testAgent struct {
	stack    *stack.Stack
	token    TokenFile
	tokenDir string
	upstream string // stackAddr:port of the upstream's cleartext listener
	client   *http.Client
	base     string // https://127.0.0.1:port
}

func newTestAgent(t *testing.T) *testAgent {
	t.Helper()
	dir := t.TempDir()
	cfg, err := stack.LoadConfig("../targets.json")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := stack.EnsureCerts(filepath.Join(dir, "certs"), cfg.Hostname)
	if err != nil {
		t.Fatal(err)
	}
	s := &stack.Stack{Paths: stack.Paths{RunDir: dir}, Config: cfg}
	ta := &testAgent{stack: s, tokenDir: dir, upstream: startUpstream(t)}
	ta.writeState(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ListenAndServe(ctx, s, "127.0.0.1:0", func(string, ...any) {}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	})
	ta.token = waitToken(t, filepath.Join(dir, TokenName), done)

	caPEM, err := os.ReadFile(certs.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	host, _, _ := net.SplitHostPort(ta.token.Listen)
	// verified as the load host does: the stack's CA, and the address as the name
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: host}}
	t.Cleanup(tr.CloseIdleConnections)
	ta.client = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	ta.base = "https://" + ta.token.Listen
	return ta
}

// writeState is the state a stack would have written: this process as nginx, the upstream's
// port for direct (whose process is this one too: the upstream runs in it).
func (ta *testAgent) writeState(t *testing.T) {
	t.Helper()
	_, port, _ := net.SplitHostPort(ta.upstream)
	h1c, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	self := stack.Adopt(os.Getpid())
	st := stack.State{Started: time.Now(), Listen: stackAddr, CPUs: stateCPUs, Targets: map[string]*stack.Running{
		stack.Direct: {Process: self, Ports: stack.Ports{H1C: h1c}},
		"nginx":      {Process: self, Ports: stack.Ports{H1C: h1c}},
	}}
	if err := stack.WriteJSON(filepath.Join(ta.stack.RunDir, "state.json"), st); err != nil {
		t.Fatal(err)
	}
}

// stateCPUs are the CPUs the test's stack records: not this machine's count, so that only the
// state's can be read back.
const stateCPUs = 97

// stackAddr is where the test's stack listens: an address of this host (loopback is a /8) that
// is not targets.json's, so that only the state's listen leads there.
const stackAddr = "127.0.0.2"

// startUpstream serves the real upstream's routes on a cleartext listener at stackAddr.
func startUpstream(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(stackAddr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := upstream.Serve(upstream.Listeners{H1C: ln}, upstream.Config{UploadLimit: 1 << 20, ErrorLog: log.New(io.Discard, "", 0)})
	t.Cleanup(srv.Close)
	return ln.Addr().String()
}

// waitToken reads the token file once ListenAndServe wrote it (it is renamed in whole).
func waitToken(t *testing.T, path string, done <-chan error) TokenFile {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("ListenAndServe ended before serving: %v", err)
		default:
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var tf TokenFile
		if err := json.Unmarshal(data, &tf); err != nil {
			t.Fatal(err)
		}
		return tf
	}
	t.Fatal("no token file after 10s")
	return TokenFile{}
}

// do sends method path with body (none when empty) and the token auth gives ("": none).
func (ta *testAgent) do(t *testing.T, method, path, body, auth string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ta.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	res, err := ta.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, data
}
