package cluster

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// client is an HTTPS client of one server (etcd, the API server) with a client certificate,
// trusting the cluster's CA only.
type client struct {
	base string
	http *http.Client
}

func newClient(dir, base, ca string, cert pair) (*client, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, ca))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s: no certificate", ca)
	}
	pairTLS, err := tls.LoadX509KeyPair(filepath.Join(dir, cert.Cert), filepath.Join(dir, cert.Key))
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pairTLS}, MinVersion: tls.VersionTLS12}}
	return &client{base: base, http: &http.Client{Transport: tr, Timeout: 5 * time.Second}}, nil
}

// get reads path into v (JSON), or returns the status and what the server said.
func (c *client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// healthy: etcd's own health check, which needs a leader and a working store.
func (c *client) healthy(ctx context.Context) error {
	var h struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := c.get(ctx, "/health", &h); err != nil {
		return err
	}
	if h.Health != "true" {
		return fmt.Errorf("etcd /health: %q %s", h.Health, h.Reason)
	}
	return nil
}

// ready: the API server's readiness, etcd and its post-start hooks (the default RBAC roles)
// included.
func (c *client) ready(ctx context.Context) error { return c.get(ctx, "/readyz", nil) }

// leaseHeld: a leader-elected component has taken its lease, so it runs its loops.
func (c *client) leaseHeld(name string) func(context.Context) error {
	return func(ctx context.Context) error {
		var l struct {
			Spec struct {
				HolderIdentity string `json:"holderIdentity"`
			} `json:"spec"`
		}
		if err := c.get(ctx, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"+name, &l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == "" {
			return fmt.Errorf("lease kube-system/%s has no holder", name)
		}
		return nil
	}
}

func (c *client) serviceAccount(namespace, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		return c.get(ctx, "/api/v1/namespaces/"+namespace+"/serviceaccounts/"+name, nil)
	}
}

// crdsEstablished: every CRD of the files in dir is served.
func (c *client) crdsEstablished(dir string) func(context.Context) error {
	return func(ctx context.Context) error {
		names, err := crdNames(dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			var crd struct {
				Status struct {
					Conditions []struct{ Type, Status string } `json:"conditions"`
				} `json:"status"`
			}
			if err := c.get(ctx, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+n, &crd); err != nil {
				return err
			}
			established := false
			for _, cond := range crd.Status.Conditions {
				established = established || cond.Type == "Established" && cond.Status == "True"
			}
			if !established {
				return fmt.Errorf("CRD %s is not established", n)
			}
		}
		return nil
	}
}

// crdNames are metadata.name of each CRD file (*.yaml) in dir.
func crdNames(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var crd struct {
			Metadata struct{ Name string } `yaml:"metadata"`
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if crd.Metadata.Name == "" {
			return nil, fmt.Errorf("%s: no CRD (no metadata.name)", f)
		}
		names = append(names, crd.Metadata.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no CRD (*.yaml) in %s", dir)
	}
	return names, nil
}

// logHas: a line of the log at path holds every one of words. For the operator's controller,
// bound to port 0, its log is what says it works.
func logHas(path string, words ...string) func(context.Context) error {
	return func(context.Context) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if containsAll(sc.Text(), words) {
				return nil
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		return errors.New("no line of " + path + " says " + strings.Join(words, " … "))
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// nodeReady: the kubelet has registered the Node, which reports Ready and carries no taint
// (a pressure taint keeps every pod off it).
func (c *client) nodeReady(name string) func(context.Context) error {
	return func(ctx context.Context) error {
		var n struct {
			Spec struct {
				Taints []struct{ Key, Effect string } `json:"taints"`
			} `json:"spec"`
			Status struct {
				Conditions []struct{ Type, Status, Reason, Message string } `json:"conditions"`
			} `json:"status"`
		}
		if err := c.get(ctx, "/api/v1/nodes/"+name, &n); err != nil {
			return err
		}
		if len(n.Spec.Taints) > 0 {
			t := n.Spec.Taints[0]
			return fmt.Errorf("node %s is tainted %s:%s", name, t.Key, t.Effect)
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == "Ready" {
				if cond.Status == "True" {
					return nil
				}
				return fmt.Errorf("node %s is not Ready: %s: %s", name, cond.Reason, cond.Message)
			}
		}
		return fmt.Errorf("node %s reports no Ready condition yet", name)
	}
}
