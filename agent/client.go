package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// clientTimeout bounds one call but a restart: the agent answers from memory or a local file.
const clientTimeout = 30 * time.Second

// restartTimeout bounds a restart, which the agent answers once the target is verified: up to
// its server's WriteTimeout.
const restartTimeout = 2 * time.Minute

// Client is the load host's side of the agent: every call over TLS verified against the stack's
// CA, whose sha256 the token file pins.
type Client struct {
	base  *url.URL // https://ip:port
	token string
	caPEM []byte
	http  *http.Client
}

// StackState is GET /v1/state: the stack's state (its CPUs among it, 0 from a stack that did
// not record them) and, where the stack records it, the address its targets listen on.
type StackState struct {
	stack.State
	Listen string `json:"listen,omitempty"`
}

// Host is the IP address the load goes to: the state's listen address, else the agent's own
// (the address the load host reaches the stack host at).
func (c *Client) Host(st *StackState) string {
	if st != nil && st.Listen != "" {
		if h, _, err := net.SplitHostPort(st.Listen); err == nil {
			return h
		}
		if net.ParseIP(st.Listen) != nil {
			return st.Listen
		}
	}
	return c.base.Hostname()
}

// Dial is the agent at stackURL (https://ip:port) with the token file at tokenFile: it fetches
// the CA, without the token, over a first connection it cannot verify yet, trusts it only if
// its sha256 is the token file's ca_sha256, and checks that the same connection's certificate
// is one that CA signed; every call after carries the token, verified against it.
func Dial(ctx context.Context, stackURL, tokenFile string) (*Client, error) {
	base, err := parseStackURL(stackURL)
	if err != nil {
		return nil, err
	}
	tf, err := ReadToken(tokenFile)
	if err != nil {
		return nil, err
	}
	c := &Client{base: base} // no token until the CA is pinned: fetchCA sends none
	caPEM, peer, err := c.fetchCA(ctx)
	if err != nil {
		return nil, err
	}
	sum, err := CASHA256(caPEM)
	if err != nil {
		return nil, fmt.Errorf("agent %s: GET /v1/ca: %w", base.Host, err)
	}
	if sum != tf.CASHA256 {
		return nil, fmt.Errorf("agent %s: the CA it serves hashes to %s, the token file %s pins %s: not the stack's CA, not trusted (copy the token file again from the stack host)", base.Host, sum, tokenFile, tf.CASHA256)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("agent %s: GET /v1/ca: no certificate", base.Host)
	}
	// a server that serves the stack's CA (public) behind a certificate the CA did not sign is
	// not the stack's agent: said here, before any call sends it the token
	if _, err := peer.Verify(x509.VerifyOptions{Roots: roots, DNSName: base.Hostname()}); err != nil {
		return nil, fmt.Errorf("agent %s: its certificate is not the pinned CA's for %s: %w (not the stack's agent: the token was not sent)", base.Host, base.Hostname(), err)
	}
	c.caPEM, c.token = caPEM, tf.Token
	tr := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: roots, ServerName: base.Hostname()}}
	c.http = &http.Client{Transport: tr}
	return c, nil
}

// parseStackURL checks STACK: https://ip:port, the address the agent's certificate names.
func parseStackURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	switch {
	case err != nil:
		return nil, fmt.Errorf("STACK=%q: %w", s, err)
	case u.Scheme != "https" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil:
		return nil, fmt.Errorf("STACK=%q: want https://IP:PORT, the agent's address on the stack host (`make agent STACK_LISTEN=IP:PORT` prints it)", s)
	case net.ParseIP(u.Hostname()) == nil:
		return nil, fmt.Errorf("STACK=%q: %q is not an IP address (the agent's certificate names its address)", s, u.Hostname())
	}
	return &url.URL{Scheme: "https", Host: u.Host}, nil
}

// ReadToken reads a token file the agent wrote.
func ReadToken(path string) (TokenFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return TokenFile{}, fmt.Errorf("agent token file: %w (copy run/%s from the stack host; STACK_TOKEN names another path)", err, TokenName)
	}
	var tf TokenFile
	if err := json.Unmarshal(data, &tf); err != nil {
		return TokenFile{}, fmt.Errorf("agent token file %s: %w", path, err)
	}
	if tf.Token == "" || tf.CASHA256 == "" {
		return TokenFile{}, fmt.Errorf("agent token file %s: no token or no ca_sha256", path)
	}
	return tf, nil
}

// fetchCA is GET /v1/ca over a connection not verified yet, and that connection's certificate.
func (c *Client) fetchCA(ctx context.Context) ([]byte, *x509.Certificate, error) {
	// nothing is trusted, and no token sent, before the CA is pinned: Dial verifies the CA by
	// its sha256, then this connection's certificate against it
	tr := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	res, err := c.send(ctx, hc, http.MethodGet, "/v1/ca", nil, clientTimeout)
	if err != nil {
		return nil, nil, err
	}
	if res.tls == nil || len(res.tls.PeerCertificates) == 0 {
		return nil, nil, fmt.Errorf("agent %s: GET /v1/ca: no server certificate", c.base.Host)
	}
	return res.body, res.tls.PeerCertificates[0], nil
}

// answer is one call's answer: its body and the connection's TLS state.
type answer struct {
	body []byte
	tls  *tls.ConnectionState
}

// maxAnswer caps what is read of an answer: a state or a sample is a few KiB.
const maxAnswer = 8 << 20

// send makes one call, with the token once Dial has it; an answer other than 2xx is an error naming the call and
// the agent's reason ({"error": …}).
func (c *Client) send(ctx context.Context, hc *http.Client, method, path string, body any, timeout time.Duration) (*answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	call := method + " " + path
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %s: %w", c.base.Host, call, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %s: %w", c.base.Host, call, err)
	}
	if c.token != "" { // none before Dial has pinned the CA
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %s: %w", c.base.Host, call, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("agent %s: %s: %w", c.base.Host, call, err)
	}
	if res.StatusCode/100 != 2 {
		var p problem
		if json.Unmarshal(data, &p) != nil || p.Error == "" {
			p.Error = strings.TrimSpace(string(data))
		}
		return nil, fmt.Errorf("agent %s: %s: %s: %s", c.base.Host, call, res.Status, p.Error)
	}
	return &answer{body: data, tls: res.TLS}, nil
}

// call sends a verified call and decodes its JSON answer into out (nil: none).
func (c *Client) call(ctx context.Context, method, path string, body, out any, timeout time.Duration) error {
	a, err := c.send(ctx, c.http, method, path, body, timeout)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("agent %s: %s %s: %w", c.base.Host, method, path, err)
	}
	return nil
}

// State is the stack's state.
func (c *Client) State(ctx context.Context) (*StackState, error) {
	var st StackState
	if err := c.call(ctx, http.MethodGet, "/v1/state", nil, &st, clientTimeout); err != nil {
		return nil, err
	}
	return &st, nil
}

// Upstream decodes the upstream's own answer to path (/debug/conns, /debug/served) into out,
// read by the agent over a connection of its own.
func (c *Client) Upstream(ctx context.Context, path string, out any) error {
	switch path {
	case "/debug/conns", "/debug/served":
	default:
		return fmt.Errorf("agent: the upstream's %s is not served (only /debug/conns and /debug/served)", path)
	}
	return c.call(ctx, http.MethodGet, "/v1/upstream/"+strings.TrimPrefix(path, "/debug/"), nil, out, clientTimeout)
}

// StartSample starts a sampler on target's process tree on the stack host.
func (c *Client) StartSample(ctx context.Context, target string) (Sample, error) {
	var s Sample
	err := c.call(ctx, http.MethodPost, "/v1/samples", sampleRequest{Target: target}, &s, clientTimeout)
	return s, err
}

// StopSample stops sampler id and returns its figures.
func (c *Client) StopSample(ctx context.Context, id string) (Sample, error) {
	var s Sample
	if err := c.call(ctx, http.MethodDelete, "/v1/samples/"+url.PathEscape(id), nil, &s, clientTimeout); err != nil {
		return s, err
	}
	if s.Resources == nil {
		return s, fmt.Errorf("agent %s: DELETE /v1/samples/%s: no figures in the answer", c.base.Host, id)
	}
	return s, nil
}

// Window is the target's figures over [from, to] (the stack host's clock) of stopped sampler
// id; ok is false with fewer than two samples in it.
func (c *Client) Window(ctx context.Context, id string, from, to time.Time) (w Sample, ok bool, err error) {
	q := url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}}
	if err := c.call(ctx, http.MethodGet, "/v1/samples/"+url.PathEscape(id)+"?"+q.Encode(), nil, &w, clientTimeout); err != nil {
		return w, false, err
	}
	return w, w.Window != nil, nil
}

// Restart restarts target on the stack host, verified, and returns it as it now runs.
func (c *Client) Restart(ctx context.Context, target string) (*stack.Running, error) {
	var r stack.Running
	if err := c.call(ctx, http.MethodPost, "/v1/targets/"+url.PathEscape(target)+"/restart", nil, &r, restartTimeout); err != nil {
		return nil, err
	}
	return &r, nil
}

// CAFile writes the stack's CA to dir/ca.pem (k6's SSL_CERT_FILE, the prober's roots) and
// returns its path.
func (c *Client) CAFile(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("agent CA: %w", err)
	}
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, c.caPEM, 0o644); err != nil {
		return "", fmt.Errorf("agent CA: %w", err)
	}
	return path, nil
}

// Addr is the agent's host:port.
func (c *Client) Addr() string { return c.base.Host }

// Close lets the client's idle connections go.
func (c *Client) Close() { c.http.CloseIdleConnections() }
