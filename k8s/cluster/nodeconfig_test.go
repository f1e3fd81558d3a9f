package cluster

import (
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The pods' routes are networks (a route to a host address with its prefix is refused by the
// bridge plugin), and name only the Services and the host's end of the veth: no default.
func TestCNIConfigRoutes(t *testing.T) {
	var conf struct {
		Plugins []struct {
			Type string `json:"type"`
			IPAM struct {
				Routes []struct{ Dst string } `json:"routes"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(cniConfig("/x", "proxybench-abc")), &conf); err != nil {
		t.Fatalf("cniConfig is no JSON: %v", err)
	}
	var dsts []string
	for _, p := range conf.Plugins {
		for _, r := range p.IPAM.Routes {
			ip, n, err := net.ParseCIDR(r.Dst)
			if err != nil || !ip.Equal(n.IP) {
				t.Errorf("route %q is not a network address", r.Dst)
			}
			dsts = append(dsts, r.Dst)
		}
	}
	if got := strings.Join(dsts, " "); got != serviceRange+" "+vethNet {
		t.Errorf("routes %s, want the Services' and the veth's only", got)
	}
	if _, n, _ := net.ParseCIDR(vethNet); !n.Contains(net.ParseIP(HostIP)) || !n.Contains(net.ParseIP(nodeIP)) {
		t.Errorf("%s does not hold both ends of the veth", vethNet)
	}
}

// The kubelet's and kube-proxy's files are YAML, and what they name is under the folder.
func TestNodeConfigFiles(t *testing.T) {
	dir := "/tmp/pb"
	for name, text := range map[string]string{
		"kubelet.yaml":    kubeletConfig(dir, pkiNames(), "proxybench-k8s-abc"),
		"kube-proxy.yaml": kubeProxyConfig(dir),
	} {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if doc["kind"] == nil || doc["apiVersion"] == nil {
			t.Errorf("%s: no kind or apiVersion", name)
		}
	}
	var kc map[string]any
	_ = yaml.Unmarshal([]byte(kubeletConfig(dir, pkiNames(), "proxybench-k8s-abc")), &kc)
	for _, k := range []string{"podLogsDir", "tlsCertFile", "tlsPrivateKeyFile"} {
		if v, _ := kc[k].(string); !strings.HasPrefix(v, dir+"/") {
			t.Errorf("kubelet.yaml %s = %q, not under %s", k, v, dir)
		}
	}
	if kc["failCgroupV1"] != false || kc["cgroupDriver"] != "cgroupfs" {
		t.Errorf("kubelet.yaml: failCgroupV1 %v, cgroupDriver %v: this machine's cgroups are v1, without systemd", kc["failCgroupV1"], kc["cgroupDriver"])
	}
}

// A unix socket's path holds 107 bytes at most: the socket stays short for a test's folder.
func TestContainerdSocketFits(t *testing.T) {
	dir := filepath.Join("/tmp", "TestK8sRunOnTheKubelet1909710720", "001", "run", "k8s", "cluster")
	if p := containerdSocket(dir) + ".ttrpc"; len(p) > 107 {
		t.Errorf("%s: %d bytes, more than a unix socket's 107", p, len(p))
	}
}

func TestMountsUnder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`/a\040b`, "/a b"},
		{"/plain", "/plain"},
	} {
		if got := unescapeMount(tc.in); got != tc.want {
			t.Errorf("unescapeMount(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	got, err := mountsUnder("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if p != "/proc" && !strings.HasPrefix(p, "/proc/") {
			t.Errorf("mountsUnder(/proc) gave %s", p)
		}
	}
}
