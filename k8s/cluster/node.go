package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The node's network. One network namespace holds containerd, the kubelet, kube-proxy, the pods'
// bridge and every iptables rule they make; a veth pair joins it to the host. Netfilter tables
// belong to their namespace, so deleting it takes every rule with it. The node has no default
// route: pods reach the host's end of the veth (where the stack listens: STACK_LISTEN), each
// other and the cluster's Services, and nothing else.
const (
	HostIP     = "10.232.255.1" // the host's end of the veth: the API server and the stack
	nodeIP     = "10.232.255.2" // the node's end: the kubelet's and kube-proxy's address
	vethPrefix = "30"
	vethNet    = "10.232.255.0/30"
	podRange   = "10.232.0.0/24"
	podGateway = "10.232.0.1"
	nodeName   = "proxybench-node"
)

// KernelTunables are the global sysctls (under /proc/sys) the kubelet sets at start
// (setupKernelTunables): Up keeps their values before and Down puts them back.
var KernelTunables = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// Node is what Up made outside its folder for a node, for Down to undo.
type Node struct {
	Netns    string            `json:"netns"`
	HostVeth string            `json:"host_veth"`
	Sysctls  map[string]string `json:"sysctls"` // /proc/sys path → value before the kubelet
	Cgroup   string            `json:"cgroup"`  // the kubelet's cgroupRoot, under each hierarchy
	// Made are the folders outside ours that the node writes in and that did not exist before
	// it: Down removes them whole. In those that did, it removes only its own entries.
	Made []string `json:"made"`
}

// outside are the folders a node writes in outside its own, whatever it is told: the
// kubelet's links to the containers' logs, the CNI library's cache of results, the shims'
// sockets and fifos, and the folder of `ip netns` (which mounts it on itself, shared).
var outside = []string{"/var/log/containers", "/var/lib/cni", "/run/containerd", "/run/netns"}

// keepOutside notes which of outside do not exist yet.
func (n *Node) keepOutside() {
	n.Made = nil
	for _, p := range outside {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			n.Made = append(n.Made, p)
		}
	}
}

// NodeBinaries are the node's programs: install-node.sh's.
type NodeBinaries struct {
	Kubelet, KubeProxy, Containerd, Runc, CNI string
}

// netnsPath is where `ip netns` keeps the namespace, which nsenter enters.
func (n *Node) netnsPath() string { return filepath.Join("/run/netns", n.Netns) }

// inNode is argv run in the node's network namespace. nsenter execs argv, so the pid stays
// the program's. Not `ip netns exec`, which mounts a sysfs of its own over /sys and hides the
// cgroup hierarchies runc and the kubelet need.
func (n *Node) inNode(argv ...string) []string {
	return append([]string{"nsenter", "--net=" + n.netnsPath(), "--"}, argv...)
}

// newNode names the node's namespace and veth after the cluster's folder, so that a second
// cluster on the machine is refused by name rather than by a broken route.
func newNode(dir string) *Node {
	h := shortHash(dir)
	return &Node{Netns: "pbk8s-" + h, HostVeth: "pbk8s-" + h, Cgroup: "proxybench-k8s-" + h}
}

// network is the CNI network's name, which names its entries in the CNI library's cache.
func (n *Node) network() string { return "proxybench-" + strings.TrimPrefix(n.Netns, "pbk8s-") }

// setupNetwork makes the namespace, the veth pair and the host's routes to the pods and the
// Services. Routes go with the veth, the veth with the namespace.
func (n *Node) setupNetwork(ctx context.Context) error {
	if out, err := exec.CommandContext(ctx, "ip", "-o", "addr", "show", "to", HostIP).CombinedOutput(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
		return fmt.Errorf("%s is already an address here (%s): another cluster with a node runs; stop it with `make k8s-down`", HostIP, strings.Fields(string(out))[1])
	}
	peer := n.HostVeth + "n"
	steps := [][]string{
		{"ip", "netns", "add", n.Netns},
		{"ip", "link", "add", n.HostVeth, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", n.Netns},
		{"ip", "addr", "add", HostIP + "/" + vethPrefix, "dev", n.HostVeth},
		{"ip", "link", "set", n.HostVeth, "up"},
		{"ip", "-n", n.Netns, "addr", "add", nodeIP + "/" + vethPrefix, "dev", peer},
		{"ip", "-n", n.Netns, "link", "set", peer, "up"},
		{"ip", "-n", n.Netns, "link", "set", "lo", "up"},
		{"ip", "route", "add", podRange, "via", nodeIP},
		{"ip", "route", "add", serviceRange, "via", nodeIP},
		// forwarding is off in a new namespace: the node routes between the veth and the pods
		n.inNode("sysctl", "-qw", "net.ipv4.ip_forward=1"),
	}
	for _, argv := range steps {
		if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("node network: %s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// keepSysctls reads the values the kubelet will change.
func (n *Node) keepSysctls() error {
	n.Sysctls = map[string]string{}
	for _, k := range KernelTunables {
		v, err := os.ReadFile(filepath.Join("/proc/sys", k))
		if err != nil {
			return fmt.Errorf("sysctl %s: %w", k, err)
		}
		n.Sysctls[k] = strings.TrimSpace(string(v))
	}
	return nil
}

// makeCgroups makes the kubelet's cgroupRoot in every hierarchy (the kubelet wants it there
// before it starts). A v1 cpuset takes its CPUs and memory nodes from its parent only when told.
func (n *Node) makeCgroups() error {
	tops, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, top := range tops {
		if fi, err := os.Lstat(top); err != nil || !fi.IsDir() {
			continue
		}
		p := filepath.Join(top, n.Cgroup)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", p, err)
		}
		if filepath.Base(top) != "cpuset" {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(top, f))
			if err == nil {
				err = os.WriteFile(filepath.Join(p, f), v, 0o644)
			}
			if err != nil {
				return fmt.Errorf("cgroup %s: %s: %w", p, f, err)
			}
		}
	}
	return nil
}

// teardown undoes what Up made outside the folder once every process of the node is gone:
// the mounts under dir, the namespace (veth, routes, bridge, iptables), the cgroups, the
// sysctls and the links the kubelet writes in /var/log/containers. Each step runs even when
// one before failed; the error joins them all.
func (n *Node) teardown(dir string) error {
	var errs []error
	errs = append(errs, unmountUnder(dir))
	if _, err := os.Stat(n.netnsPath()); err == nil {
		if out, err := exec.Command("ip", "netns", "del", n.Netns).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip netns del %s: %w: %s", n.Netns, err, strings.TrimSpace(string(out))))
		}
	}
	if _, err := net.InterfaceByName(n.HostVeth); err == nil {
		if out, err := exec.Command("ip", "link", "del", n.HostVeth).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link del %s: %w: %s", n.HostVeth, err, strings.TrimSpace(string(out))))
		}
	}
	errs = append(errs, removeCgroups(n.Cgroup))
	for k, v := range n.Sysctls {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", k, v, err))
		}
	}
	for _, p := range n.Made {
		_ = unmount(p) // /run/netns, mounted on itself
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, removeLinksInto("/var/log/containers", dir))
	cached, _ := filepath.Glob(filepath.Join("/var/lib/cni/results", n.network()+"-*"))
	for _, p := range cached {
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unmountUnder detaches every mount point under dir, the deepest first: the kubelet's bind of
// its own folder, the pods' volumes, the containers' root filesystems, the sandboxes' network
// namespaces and shared memory.
func unmountUnder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var errs []error
	for range 5 { // a mount can hide another mounted at the same point
		points, err := mountsUnder(abs)
		if err != nil || len(points) == 0 {
			return errors.Join(append(errs, err)...)
		}
		errs = errs[:0]
		for _, p := range points {
			if err := unmount(p); err != nil {
				errs = append(errs, fmt.Errorf("umount %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// removeCgroups removes the kubelet's cgroup tree in every hierarchy, the leaves first. The
// processes in it are gone by then; a cgroup still busy is an error naming it.
func removeCgroups(root string) error {
	if root == "" {
		return nil
	}
	tops, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", root))
	var errs []error
	for _, top := range tops {
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := rmdirRetry(dirs[i]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// rmdirRetry removes an empty cgroup, waiting a moment for the kernel to let its last
// process go.
func rmdirRetry(p string) error {
	var err error
	for range 20 {
		if err = os.Remove(p); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("cgroup %s: %w", p, err)
}

// removeLinksInto removes the symbolic links in folder that point into dir.
func removeLinksInto(folder, dir string) error {
	entries, err := os.ReadDir(folder)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(dir)
	var errs []error
	for _, e := range entries {
		p := filepath.Join(folder, e.Name())
		if to, err := os.Readlink(p); err == nil && strings.HasPrefix(to, abs+string(filepath.Separator)) {
			if err := os.Remove(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
