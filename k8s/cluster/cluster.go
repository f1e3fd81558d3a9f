// Package cluster runs a Kubernetes control plane on loopback, with the k6-operator's
// controller beside it, so that what `make k8s` writes meets a real API server and the real
// operator: etcd, kube-apiserver, kube-controller-manager and kube-scheduler (built by
// install.sh), certificates of a CA of its own, and the operator's `manager` run out of the
// cluster (install-operator.sh). Without a node, pods are created and stay Pending; with one
// (node.go: containerd, the kubelet and kube-proxy in a network namespace of their own), they run.
//
// `make k8s-up` and `make k8s-down` call it (cmd/proxybench), and so does e2e's test of a
// TestRun; every process is started in its own process group and stopped by pid.
package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// Binaries are the programs a cluster runs, and the operator's CRDs.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler, Kubectl string
	Manager                                                string // the k6-operator's controller
	CRDs                                                   string // the folder of its CRDs
}

// ErrNoOperator is Find's error when the k6-operator is not installed: no registry serves it.
var ErrNoOperator = errors.New("no k6-operator in the install cache: give K6_OPERATOR_DIR=<a directory with the manager .xz and crd/> (k8s/README.md)")

// Find looks the binaries up in the install cache: cache/k8s/bin (install.sh) and
// cache/k8s/k6-operator (install-operator.sh).
func Find(cache string) (Binaries, error) {
	bin := filepath.Join(cache, "k8s", "bin")
	op := filepath.Join(cache, "k8s", "k6-operator")
	b := Binaries{
		Etcd: filepath.Join(bin, "etcd"), APIServer: filepath.Join(bin, "kube-apiserver"),
		ControllerManager: filepath.Join(bin, "kube-controller-manager"), Scheduler: filepath.Join(bin, "kube-scheduler"),
		Kubectl: filepath.Join(bin, "kubectl"),
		Manager: filepath.Join(op, "manager"), CRDs: filepath.Join(op, "crd"),
	}
	var missing []string
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler, b.Kubectl} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, filepath.Base(p))
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("%s not built in %s: run `make k8s-install` (k8s/cluster/install.sh; about 20 min the first time)", strings.Join(missing, ", "), bin)
	}
	if _, err := os.Stat(b.Manager); err != nil {
		return b, ErrNoOperator
	}
	return b, nil
}

// Component is one process of the cluster.
type Component struct {
	Name string `json:"name"`
	stack.Process
}

// Cluster is a running control plane, as state.json in its folder keeps it.
type Cluster struct {
	Dir        string      `json:"dir"`
	Server     string      `json:"server"`     // https://127.0.0.1:<port>
	Kubeconfig string      `json:"kubeconfig"` // the admin's
	Kubectl    string      `json:"kubectl"`
	Components []Component `json:"components"` // in the order started
	Node       *Node       `json:"node,omitempty"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func (c *Cluster) save() error { return stack.WriteJSON(statePath(c.Dir), c) }

// Load is the cluster whose state is in dir, or nil when none was started there.
func Load(dir string) (*Cluster, error) {
	data, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	if err := stack.DecodeJSON(statePath(dir), data, c, false); err != nil {
		return nil, err
	}
	return c, nil
}

// Alive reports whether every component is still running.
func (c *Cluster) Alive() bool {
	for _, p := range c.Components {
		if !p.Alive() {
			return false
		}
	}
	return len(c.Components) > 0
}

// Down stops every component by pid, the last started first (the operator before the API
// server it talks to, etcd last), and removes the state file. The folder stays, with the logs.
//
// With a node, the pods' processes and containerd's shims, which outlive containerd, are killed
// once every component has stopped, and the node's teardown then undoes what it made outside
// the folder.
func (c *Cluster) Down() error {
	var errs []error
	if c.Node != nil && c.Alive() {
		// the kubelet stops the pods it runs and their sandboxes, which returns their addresses
		// and the CNI's records; anything left is killed below
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		_, _ = c.Run(ctx, "delete", "pods", "--all", "--all-namespaces", "--wait", "--timeout=60s")
		cancel()
	}
	for _, p := range slices.Backward(c.Components) {
		if err := p.Stop(10 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name, err))
		}
	}
	if c.Node != nil {
		if err := c.Node.stopNodeWorkloads(c.Dir); err != nil {
			errs = append(errs, err)
		}
		if err := c.Node.teardown(c.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.Remove(statePath(c.Dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Run runs kubectl against the cluster as its admin and returns its output; an error holds
// what kubectl said.
func (c *Cluster) Run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
