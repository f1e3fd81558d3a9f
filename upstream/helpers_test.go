package main

import (
	"context"
	"crypto/x509"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/proxybench/proxybench/extensions/localca"
)

const testHost = "bench.test"

// TestMain doubles as the upstream binary when upstreamMainEnv is set, so
// that signal and exit-code tests run the real main without a go build.
const upstreamMainEnv = "UPSTREAM_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(upstreamMainEnv) == "1" {
		os.Exit(realMain(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

// testCert is a throwaway bench.test certificate and its CA, written as PEM
// files for -cert and -key.
type testCert struct {
	certFile, keyFile string
	roots             *x509.CertPool
}

func newTestCert(t *testing.T) testCert {
	t.Helper()
	a, err := localca.New("upstream test CA", []string{testHost, "127.0.0.1"}, time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, leafPEM, keyPEM, err := a.PEM()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tc := testCert{
		certFile: filepath.Join(dir, "cert.pem"),
		keyFile:  filepath.Join(dir, "key.pem"),
		roots:    a.Pool(),
	}
	for path, data := range map[string][]byte{tc.certFile: leafPEM, tc.keyFile: keyPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return tc
}

// stack is the upstream started from a config on 127.0.0.1:0, every listener: h3 on the TLS
// port over UDP, as the stack runs it. The routes' own tests are in extensions/upstream; these
// are of what the flags make of them.
type stack struct {
	tlsURL  string // https://bench.test:port, dialled at 127.0.0.1 (TCP, and UDP for h3)
	tlsAddr string
	h3Addr  string
	roots   *x509.CertPool
}

// newStackWith starts a stack whose config set changes first.
func newStackWith(t *testing.T, set func(*config)) *stack {
	t.Helper()
	tc := newTestCert(t)
	cfg := config{
		h1c: "127.0.0.1:0", tls: "127.0.0.1:0", h3: "127.0.0.1:0",
		cert: tc.certFile, key: tc.keyFile,
		uploadLimit: 1 << 10,
	}
	set(&cfg)
	in, err := start(cfg, discardLogger())
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := in.srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		in.srv.Close()
	})
	_, port, _ := net.SplitHostPort(in.tlsAddr.String())
	return &stack{
		tlsURL:  "https://" + net.JoinHostPort(testHost, port),
		tlsAddr: in.tlsAddr.String(),
		h3Addr:  in.h3Addr.String(),
		roots:   tc.roots,
	}
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
