package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/proxybench/proxybench/extensions/localca"
	"github.com/proxybench/proxybench/stack"
)

// TokenName is the token file, in the run directory.
const TokenName = "agent-token.json"

// leafFor is how long the agent's leaf is valid: it is made afresh at every start.
const leafFor = 30 * 24 * time.Hour

// DefaultPort is the agent's port when STACK_LISTEN gives the stack host's address alone, as
// `make up` takes it.
const DefaultPort = 7443

// Address is listen with DefaultPort added when it is an IP address alone: STACK_LISTEN is the
// stack host's address for `make up` and `make agent` alike.
func Address(listen string) string {
	if ip := net.ParseIP(listen); ip != nil {
		return net.JoinHostPort(listen, strconv.Itoa(DefaultPort))
	}
	return listen
}

// Listen checks listen (ip:port: an IP address, not a name nor an unspecified address that
// would bind every interface) and binds it, TCP only.
func Listen(listen string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("-listen %q: want ip:port: %w", listen, err)
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return nil, fmt.Errorf("-listen %q: %q is not an IP address (the certificate names the address the load host dials)", listen, host)
	case ip.IsUnspecified():
		return nil, fmt.Errorf("-listen %q: an unspecified address binds every interface: give the one the load host reaches", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("-listen %q: %w", listen, err)
	}
	return ln, nil
}

// Leaf is a server certificate for the IP address of ln, signed by ca.
func Leaf(ca *localca.Authority, ln net.Listener) (tls.Certificate, error) {
	host, _, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return tls.Certificate{}, err
	}
	l, err := ca.Issue(localca.Leaf{
		Subject: pkix.Name{CommonName: "proxybench agent " + host},
		Hosts:   []string{host},
		Usage:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		For:     leafFor,
	})
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("agent certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{l.DER}, PrivateKey: l.Key}, nil
}

// Serve serves a's Handler over TLS (1.3) on ln with cert until ctx ends, then shuts down.
func Serve(ctx context.Context, ln net.Listener, a *Agent, cert tls.Certificate) error {
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// a restart verifies the target before it answers: up to the stack's ReadyTimeout
		WriteTimeout:   2 * time.Minute,
		IdleTimeout:    time.Minute,
		MaxHeaderBytes: 16 << 10,
		TLSConfig:      &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}},
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		a.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	a.Close()
	if err2 := <-errc; !errors.Is(err2, http.ErrServerClosed) {
		err = errors.Join(err, err2)
	}
	return err
}

// ListenAndServe is the stack host's agent for s on listen (ip:port, or an IP address:
// Address): it binds it, signs a leaf for it with the stack's CA (run/certs, made at setup or
// up), writes a new token file in the run directory (0600) and serves until ctx ends. out
// hears where the token file is.
func ListenAndServe(ctx context.Context, s *stack.Stack, listen string, out func(format string, args ...any)) error {
	ln, err := Listen(Address(listen))
	if err != nil {
		return err
	}
	defer ln.Close()
	certs := stack.CertsIn(filepath.Join(s.RunDir, "certs"))
	ca, err := certs.Authority()
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(certs.CAFile)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	cert, err := Leaf(ca, ln)
	if err != nil {
		return err
	}
	path := filepath.Join(s.RunDir, TokenName)
	tf, err := WriteToken(path, ln.Addr().String(), caPEM)
	if err != nil {
		return err
	}
	out("agent: serving https://%s (CA sha256 %s); token in %s (0600): copy it to the load host\n", tf.Listen, tf.CASHA256, path)
	return Serve(ctx, ln, New(s, tf.Token, caPEM), cert)
}
