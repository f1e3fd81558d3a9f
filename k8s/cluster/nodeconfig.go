package cluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// The node's configuration files. Every path a program would default to outside the folder
// (/var/lib/containerd, /run/containerd, /var/lib/kubelet, /var/log/pods, /etc/cni) is moved
// into it, so that Down has one folder to clean; the exceptions are said where Down undoes them.

// containerdSocket is kept short: a unix socket's path holds at most 107 bytes.
func containerdSocket(dir string) string { return filepath.Join(dir, "ctrd.sock") }

func containerdConfig(dir string, b NodeBinaries, pause string) string {
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	return fmt.Sprintf(`version = 2
root = %q
state = %q
# btrfs, zfs, devmapper and aufs have nothing to work on here; opt would write /opt/containerd
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  # the pods' network namespaces under the state folder, not /run/netns
  netns_mounts_under_state_dir = true
  # no OOM score below containerd's own: the kubelet asks -998 for every sandbox, which needs
  # CAP_SYS_RESOURCE, which a container or VM may not have (these machines' root lacks it)
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = %q
        Root = %q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`, abs("containerd/root"), abs("containerd/state"), containerdSocket(dir), containerdSocket(dir)+".ttrpc",
		pause, b.Runc, abs("containerd/runc"), b.CNI, abs("cni/net.d"))
}

// cniConfig is a bridge on the node with host-local addresses. The pods' routes name the
// Services and the host's end of the veth, and no default: anything else is unreachable.
func cniConfig(dir, network string) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": %q,
  "plugins": [
    {
      "type": "bridge", "bridge": "pbk8s0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": %q}, {"dst": %q}]
      }
    },
    {"type": "loopback"}
  ]
}
`, network, filepath.Join(dir, "cni/ipam"), podRange, podGateway, serviceRange, vethNet)
}

func kubeletConfig(dir string, certs pki, cgroupRoot string) string {
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# this machine's cgroups are v1, which the kubelet 1.34 still runs on when told
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /%s
containerRuntimeEndpoint: unix://%s
address: %s
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %s}
authorization: {mode: AlwaysAllow}
tlsCertFile: %s
tlsPrivateKeyFile: %s
podLogsDir: %s
resolvConf: ""
failSwapOn: true
# the images are imported, never pulled: the kubelet must never collect them
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# a shared machine's disk may be fuller than the default 10 %% free, which taints the node
evictionHard: {memory.available: 100Mi, nodefs.available: 1Gi, imagefs.available: 1Gi, nodefs.inodesFree: 1%%}
serializeImagePulls: false
`, cgroupRoot, containerdSocket(dir), nodeIP, abs(certs.CA), abs(certs.KubeletServing.Cert), abs(certs.KubeletServing.Key), abs("pod-logs"))
}

func kubeProxyConfig(dir string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: %s}
clusterCIDR: %s
hostnameOverride: %s
bindAddress: %s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# a Service's traffic from the starter to a runner on the same bridge comes back through
# the node without br_netfilter's help
iptables: {masqueradeAll: true, localhostNodePorts: false}
# 0: leave the machine's conntrack settings as they are (nf_conntrack_max is global)
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
`, filepath.Join(dir, "kube-proxy.kubeconfig"), podRange, nodeName, nodeIP)
}

// writeNodeConfig writes the files above and the folders they name.
func writeNodeConfig(dir string, b NodeBinaries, certs pki, n *Node, pause string) error {
	for _, d := range []string{"containerd/root", "containerd/state", "cni/net.d", "cni/ipam", "kubelet", "pod-logs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	}
	for name, data := range map[string]string{
		"containerd.toml":                  containerdConfig(dir, b, pause),
		"cni/net.d/10-proxybench.conflist": cniConfig(dir, n.network()),
		"kubelet.yaml":                     kubeletConfig(dir, certs, n.Cgroup),
		"kube-proxy.yaml":                  kubeProxyConfig(dir),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	}
	return nil
}
