package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// DialContext dials from inside the namespace, as a process there would: the socket is made on
// a thread moved into it (setns(2)) and stays in it, and the thread moves back before it is
// unlocked. Not left locked in the namespace to end with its goroutine: the runtime never ends
// the main thread, which then stays in the namespace, and the process with it (ip netns pids).
func (n nsHost) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	type dialed struct {
		conn net.Conn
		err  error
	}
	done := make(chan dialed, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- dialed{err: fmt.Errorf("this thread's namespace: %w", err)}
			return
		}
		defer home.Close()
		ns, err := os.Open(filepath.Join("/run/netns", n.Name))
		if err != nil {
			runtime.UnlockOSThread()
			done <- dialed{err: fmt.Errorf("namespace %s: %w", n.Name, err)}
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- dialed{err: fmt.Errorf("setns %s: %w", n.Name, err)}
			return
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if back := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); back == nil {
			runtime.UnlockOSThread() // home again: the runtime may have the thread back
		}
		done <- dialed{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// nsClient is an HTTP client of n's namespace that speaks one protocol ("h1": HTTP/1.1 alone,
// "h2": HTTP/2 alone), trusts only the CA in caFile, and reaches hostname at ip (the load host
// has no name for the stack host: curl's --resolve). It is the test's own client, so the two
// hosts need nothing installed beside iproute2.
func nsClient(t *testing.T, n nsHost, proto, caFile, hostname, ip string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("%s: no certificate", caFile)
	}
	var protocols http.Protocols
	switch proto {
	case "h1":
		protocols.SetHTTP1(true)
	case "h2":
		protocols.SetHTTP2(true)
	default:
		t.Fatalf("nsClient: protocol %q, want h1 or h2", proto)
	}
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13},
		Protocols:       &protocols,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, port, err := net.SplitHostPort(addr); err == nil && host == hostname {
				addr = net.JoinHostPort(ip, port)
			}
			return n.DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// fetch sends method to url with c, with the bearer token when one is given, and returns the
// response's protocol ("1.1", "2"), its body, and an error for any status but 200.
func fetch(c *http.Client, method, url, token string) (proto string, body []byte, err error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return "", nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	proto = strings.TrimSuffix(strings.TrimPrefix(resp.Proto, "HTTP/"), ".0")
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, body)
	}
	return proto, body, err
}
