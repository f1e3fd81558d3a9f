package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// NodeOptions is what a node needs besides the control plane: its programs, and the image
// archives containerd imports before the kubelet starts (no registry is reachable: every image
// a pod names is one of them, pulled never). Pause is the sandbox image's reference, which one
// of the archives holds.
type NodeOptions struct {
	Binaries NodeBinaries
	Images   []string
	Pause    string
}

// FindNode looks the node's programs up: the kubelet and kube-proxy in the install cache
// (install-node.sh), containerd, runc and the CNI plugins where Debian puts them.
func FindNode(cache string) (NodeBinaries, error) {
	bin := filepath.Join(cache, "k8s", "bin")
	b := NodeBinaries{
		Kubelet: filepath.Join(bin, "kubelet"), KubeProxy: filepath.Join(bin, "kube-proxy"),
		Containerd: "/usr/bin/containerd", Runc: "/usr/sbin/runc", CNI: "/usr/lib/cni",
	}
	var missing []string
	for _, p := range []string{b.Kubelet, b.KubeProxy, b.Containerd, b.Runc, filepath.Join(b.CNI, "bridge"), filepath.Join(b.CNI, "host-local")} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("a node needs %s: run `bash k8s/cluster/install-node.sh` (make k8s-up NODE=1 does)", strings.Join(missing, ", "))
	}
	// what the kubelet is configured for (nodeconfig.go), said before anything starts
	if _, err := os.Stat("/sys/fs/cgroup/cpu"); err != nil {
		return b, errors.New("a node here runs the kubelet on cgroup v1 hierarchies (cgroupfs), and /sys/fs/cgroup/cpu is not one: boot with systemd.unified_cgroup_hierarchy=0, or use a cluster of your own (make k8s)")
	}
	if swaps, err := os.ReadFile("/proc/swaps"); err == nil && strings.Count(strings.TrimSpace(string(swaps)), "\n") > 0 {
		return b, errors.New("swap is on, which the kubelet refuses (failSwapOn): turn it off (swapoff -a) for the node's time")
	}
	return b, nil
}

// nodeAPIServerArgs are the API server's flags for a node: its client certificate to the
// kubelet (pods' logs), and a token for the operator's in-cluster client (operatorInCluster).
func nodeAPIServerArgs(dir string, certs pki, node *NodeOptions) []string {
	if node == nil {
		return nil
	}
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	return []string{
		"--kubelet-client-certificate=" + abs(certs.APIServerKubelet.Cert), "--kubelet-client-key=" + abs(certs.APIServerKubelet.Key),
		"--kubelet-certificate-authority=" + abs(certs.CA), "--kubelet-preferred-address-types=InternalIP",
		"--token-auth-file=" + abs(tokenFile),
	}
}

// The operator's token: the API server's list of tokens, and the operator's own copy.
const (
	tokenFile         = "pki/tokens.csv"
	operatorTokenFile = "pki/operator.token"
)

// startNode starts containerd, imports the images, then the kubelet and kube-proxy, each in
// the node's network namespace, and returns once the Node is Ready.
func (c *Cluster) startNode(ctx context.Context, o NodeOptions, certs pki, api *client, t0 time.Time, progress io.Writer) error {
	n := c.Node
	if err := writeNodeConfig(c.Dir, o.Binaries, certs, n, o.Pause); err != nil {
		return err
	}
	if err := n.makeCgroups(); err != nil {
		return err
	}
	abs := func(rel string) string { return filepath.Join(c.Dir, rel) }
	containerd := step{
		name: "containerd", limit: 30 * time.Second, argv: n.inNode(o.Binaries.Containerd, "--config", abs("containerd.toml")),
		ready: func(ctx context.Context) error { _, err := c.ctr(ctx, "version"); return err },
	}
	if err := c.startSaying(ctx, containerd, t0, progress); err != nil {
		return err
	}
	for _, img := range o.Images {
		if _, err := c.ctr(ctx, "images", "import", img); err != nil {
			return fmt.Errorf("image %s: %w", img, err)
		}
	}
	fmt.Fprintf(progress, "k8s: %-24s up after %4.1f s\n", "images", time.Since(t0).Seconds())
	for _, s := range []step{
		{name: "kubelet", limit: 2 * time.Minute, ready: api.nodeReady(nodeName), argv: n.inNode(
			o.Binaries.Kubelet, "--config="+abs("kubelet.yaml"), "--kubeconfig="+abs("kubelet.kubeconfig"),
			"--root-dir="+abs("kubelet"), "--node-ip="+nodeIP, "--hostname-override="+nodeName,
		)},
		{
			name: "kube-proxy", limit: time.Minute, ready: logHas(abs("kube-proxy.log"), "Caches are synced", "service config"),
			argv: n.inNode(o.Binaries.KubeProxy, "--config="+abs("kube-proxy.yaml")),
		},
	} {
		if err := c.startSaying(ctx, s, t0, progress); err != nil {
			return err
		}
	}
	return nil
}

// ctr runs containerd's client on the node's containerd, in the namespace the CRI uses.
func (c *Cluster) ctr(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", containerdSocket(c.Dir), "--namespace", "k8s.io"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Import imports the image archive into the node's containerd, unless it holds ref already.
func (c *Cluster) Import(ctx context.Context, ref, archive string) error {
	if c.Node == nil {
		return errors.New("the cluster has no node to import an image into: make k8s-up NODE=1")
	}
	out, err := c.ctr(ctx, "images", "ls", "-q")
	if err != nil {
		return err
	}
	if slices.Contains(strings.Fields(string(out)), ref) {
		return nil
	}
	if _, err := c.ctr(ctx, "images", "import", archive); err != nil {
		return fmt.Errorf("image %s: %w", archive, err)
	}
	return nil
}

// operatorInCluster runs the operator's controller as if in a pod. Out of a cluster, v1.6.0
// reads the initializer's log with rest.InClusterConfig(), which wants the service host in
// its environment and a token and CA at /var/run/secrets/kubernetes.io/serviceaccount. They
// are put there in a mount namespace of the controller's own, on a tmpfs over /run that goes
// with it: the machine's /run is never written. unshare and sh exec, so the pid stays the
// controller's.
func (c *Cluster) operatorInCluster(s step, certs pki) step {
	sa := "/run/secrets/kubernetes.io/serviceaccount"
	script := `mount -t tmpfs -o mode=0755 proxybench /run && mkdir -p "$1" && cp "$2" "$1/ca.crt" && cp "$3" "$1/token" && shift 3 && exec "$@"`
	argv := append([]string{
		"unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh",
		sa, filepath.Join(c.Dir, certs.CA), filepath.Join(c.Dir, operatorTokenFile),
	}, s.argv...)
	_, port, _ := strings.Cut(strings.TrimPrefix(c.Server, "https://"), ":")
	s.argv = argv
	s.env = []string{"KUBERNETES_SERVICE_HOST=" + HostIP, "KUBERNETES_SERVICE_PORT=" + port}
	return s
}

// writeOperatorToken makes the token the API server knows the operator's in-cluster client by
// (--token-auth-file), as a user as powerful as the admin kubeconfig it is given already.
func writeOperatorToken(dir string) error {
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	token := hex.EncodeToString(tok)
	if err := os.WriteFile(filepath.Join(dir, tokenFile), []byte(token+",proxybench-k6-operator,proxybench-k6-operator,\"system:masters\"\n"), 0o600); err != nil {
		return fmt.Errorf("k6-operator token: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, operatorTokenFile), []byte(token), 0o600); err != nil {
		return fmt.Errorf("k6-operator token: %w", err)
	}
	return nil
}

// stopNodeWorkloads kills what runs in the pods and the shims containerd started for them:
// neither is a component of ours by pid, and a shim outlives containerd.
func (n *Node) stopNodeWorkloads(dir string) error {
	var pids []int
	_ = filepath.WalkDir(filepath.Join("/sys/fs/cgroup", "pids", n.Cgroup), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "cgroup.procs" {
			data, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
		}
		return nil
	})
	sock := containerdSocket(dir)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.HasPrefix(cmdline, []byte("/usr/bin/containerd-shim")) && bytes.Contains(cmdline, []byte(sock)) {
			pids = append(pids, pid)
		}
	}
	var errs []error
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill pid %d: %w", pid, err))
		}
	}
	for _, pid := range pids {
		for i := 0; i < 50 && syscall.Kill(pid, 0) == nil && !zombie(pid); i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

func zombie(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] == 'Z'
}
