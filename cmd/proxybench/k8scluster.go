package main

// `make k8s-up` and `make k8s-down`: a Kubernetes control plane and the k6-operator on
// loopback (package k8s/cluster), its state and kubeconfig in run/k8s/cluster.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proxybench/proxybench/k8s/cluster"
	"github.com/proxybench/proxybench/stack"
)

func clusterDir() (string, error) {
	root, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(envPath("PROXYBENCH_RUN", filepath.Join(root, "run")), "k8s", "cluster"), nil
}

func cmdK8sUp(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("k8s-up", flag.ContinueOnError)
	withNode := fs.Bool("node", false, "run a node too (kubelet, containerd, kube-proxy) in a network namespace of its own, with our images")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: k8s-up takes only -node", fs.Args())
	}
	dir, err := clusterDir()
	if err != nil {
		return err
	}
	if c, err := cluster.Load(dir); err != nil {
		return err
	} else if c != nil && c.Alive() {
		fmt.Printf("k8s: already up: %s, KUBECONFIG=%s (make k8s-down stops it)\n", c.Server, c.Kubeconfig)
		return nil
	} else if c != nil {
		// what is left of a cluster of which a part died: stopped before a new one starts
		if err := c.Down(); err != nil {
			return fmt.Errorf("the cluster left in %s: %w", dir, err)
		}
	}
	cache, err := stack.CacheDir()
	if err != nil {
		return err
	}
	bins, err := cluster.Find(cache)
	if err != nil {
		return err
	}
	var node *cluster.NodeOptions
	if *withNode {
		if node, err = nodeOptions(cache); err != nil {
			return err
		}
	}
	t0 := time.Now()
	c, err := cluster.Up(ctx, bins, dir, node, os.Stdout)
	if err != nil {
		return err
	}
	if node != nil {
		fmt.Printf("k8s: up in %.1f s: API server %s, node %s; the stack for its pods: make up STACK_LISTEN=%s; logs in %s\n", time.Since(t0).Seconds(), c.Server, c.Node.Netns, cluster.HostIP, dir)
	} else {
		fmt.Printf("k8s: up in %.1f s: API server %s, no kubelet (pods stay Pending); logs in %s\n", time.Since(t0).Seconds(), c.Server, dir)
	}
	fmt.Printf("  export KUBECONFIG=%s   then: kubectl apply --server-side -f run/k8s/<testid>/<scenario>/; make k8s-down stops it\n", c.Kubeconfig)
	return nil
}

func cmdK8sDown(_ context.Context, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q: k8s-down takes none", args)
	}
	dir, err := clusterDir()
	if err != nil {
		return err
	}
	c, err := cluster.Load(dir)
	if err != nil {
		return err
	}
	if c == nil {
		fmt.Println("k8s: nothing to stop (no run/k8s/cluster/state.json)")
		return nil
	}
	if err := c.Down(); err != nil {
		return err
	}
	fmt.Printf("k8s: stopped %d processes by pid; logs and etcd's data stay in %s\n", len(c.Components), dir)
	return nil
}
