package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/k8s/cluster"
	"github.com/proxybench/proxybench/stack"
)

// TestK8sRunOnTheKubelet runs a TestRun for real: `make k8s-up NODE=1` (the control plane,
// the k6-operator, and a node: containerd, the kubelet and kube-proxy in a network namespace of
// their own, with images written by us and imported, pulled never), the stack on the node's
// side of the host (STACK_LISTEN), then the same cell split in two, by turns, as `make k6
// SEGMENTS=2` runs it here and as `make k8s-run PARALLELISM=2` runs it on the operator's
// runners. It checks:
//   - the TestRun went through the operator's stages to finished, its runners ran our image,
//     and the kubelet pulled nothing;
//   - each run on the operator is valid and merged from its two runners' results, one
//     execution segment each, whose requests add up to the merged result's;
//   - once `make k8s-down` is done, the host is as before: its iptables rules, the sysctls the
//     kubelet sets, no mount under the cluster's folder, no network namespace, no cgroup.
//
// It logs both runs' req/s, side by side; it does not hold them equal (see k8s/README.md: the
// pods' packets cross a bridge and a veth more, on the CPUs the stack runs on).
// `make test-k8s` runs it.
func TestK8sRunOnTheKubelet(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a node needs root: network namespaces, cgroups, mounts")
	}
	cache, err := stack.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Find(cache); err != nil {
		t.Skipf("needs a cluster: %v", err)
	}
	if _, err := cluster.FindNode(cache); err != nil {
		t.Skipf("needs a node: %v", err)
	}
	h := harnessAt(t, 3450, "nginx")
	before := hostState(t, h.run)

	out, err := h.proxybench(t, "k8s-up", "-node")
	t.Cleanup(func() {
		if out, err := h.proxybench(t, "k8s-down"); err != nil {
			t.Errorf("k8s-down: %v\n%s", err, out)
		}
		if after := hostState(t, h.run); !slices.Equal(after, before) {
			t.Errorf("the host after k8s-down differs from before k8s-up:\nbefore %q\nafter  %q", before, after)
		}
	})
	if err != nil {
		t.Fatalf("k8s-up -node: %v\n%s", err, out)
	}
	t.Logf("k8s-up -node:\n%s", out)
	listen := []string{"STACK_LISTEN=" + cluster.HostIP}
	if out, err := h.proxybenchEnv(t, listen, "up"); err != nil {
		t.Fatalf("up STACK_LISTEN=%s: %v\n%s", cluster.HostIP, err, out)
	}
	t.Cleanup(func() {
		if out, err := h.proxybench(t, "down"); err != nil {
			t.Errorf("down: %v\n%s", err, out)
		}
	})

	cell := "reused-h2-nginx"
	var here, there []float64
	for i := range 2 {
		a, b := "e2e-seg-"+string(rune('a'+i)), "e2e-k8s-"+string(rune('a'+i))
		if out, err := h.proxybench(t, "k6", "-scenario", "reused-h2", "-targets", "nginx", "-segments", "2", "-testid", a); err != nil {
			t.Fatalf("k6 -segments 2: %v\n%s", err, out)
		}
		out, err := h.proxybench(t, "k8s-run", "-scenario", "reused-h2", "-targets", "nginx", "-parallelism", "2", "-testid", b)
		if err != nil {
			t.Fatalf("k8s-run -parallelism 2: %v\n%s", err, out)
		}
		for _, stage := range []string{"initialization", "created", "started", "finished"} {
			if !strings.Contains(out, ": "+stage+"\n") {
				t.Errorf("k8s-run: the TestRun's stages do not include %s:\n%s", stage, out)
			}
		}
		if !strings.Contains(out, "2 runners on proxybench.local/k6:") {
			t.Errorf("k8s-run: the runners did not run our image:\n%s", out)
		}
		for _, id := range []string{a, b} {
			dir := filepath.Join(h.results, id)
			merged := loadResult(t, filepath.Join(dir, cell+".json"))
			checkResult(t, "reused-h2", merged)
			insts := h.segmentInstances(t, dir, cell, 2)
			var sum float64
			for _, in := range insts {
				sum += in.Result.Requests
			}
			if sum != merged.Requests {
				t.Errorf("%s: merged %v requests, its instances %v", id, merged.Requests, sum)
			}
			checkMergedPercentiles(t, id, merged, insts)
			if id == a {
				here = append(here, *merged.RPS)
			} else {
				there = append(there, *merged.RPS)
			}
			t.Logf("%s: %v + %v = %v requests, %.0f req/s, p50/p99 %v/%v ms, runners resumed at +%.1f and +%.1f ms",
				id, insts[0].Result.Requests, insts[1].Result.Requests, merged.Requests, *merged.RPS,
				merged.Latency.P50, merged.Latency.P99, merged.Segments[0].ClockOffsetMs, merged.Segments[1].ClockOffsetMs)
			for _, sg := range merged.Segments {
				if sg.ClockOffsetMs < 0 || sg.ClockOffsetMs > 10_000 {
					t.Errorf("%s: %s resumed at %+.1f ms of the first: want 0 to 10 s", id, sg.File, sg.ClockOffsetMs)
				}
			}
		}
	}
	sort.Float64s(here)
	sort.Float64s(there)
	t.Logf("reused-h2 nginx split in two: here (k6 -segments 2) %.0f req/s, on the kubelet (k8s-run -parallelism 2) %.0f req/s", here, there)

	kubelet, err := os.ReadFile(filepath.Join(h.run, "k8s", "cluster", "kubelet.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(kubelet), "Pulling image") {
		t.Errorf("the kubelet pulled an image: no registry is reachable, every image is imported")
	}
}

// hostState is what a node must leave as it found it: the host's iptables rules, the sysctls
// the kubelet sets, the mounts under dir, the network namespaces, the node's cgroups.
func hostState(t *testing.T, dir string) []string {
	t.Helper()
	var s []string
	for _, save := range []string{"iptables-save", "iptables-legacy-save"} {
		if out, err := exec.Command(save).Output(); err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				// the header and footer say when they were saved; the counters move
				if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, ":") {
					s = append(s, save+": "+l)
				}
			}
		}
	}
	for _, k := range cluster.KernelTunables {
		v, _ := os.ReadFile(filepath.Join("/proc/sys", k))
		s = append(s, k+"="+strings.TrimSpace(string(v)))
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], dir) {
			s = append(s, "mount "+f[4])
		}
	}
	// what the node may have made outside the folder, and the host's end of its veth
	for _, p := range []string{"/var/log/containers", "/var/lib/cni", "/run/containerd", "/run/netns", "/sys/class/net"} {
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			s = append(s, filepath.Join(p, e.Name()))
		}
		if entries == nil {
			s = append(s, "no "+p)
		}
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/proxybench-k8s-*")
	return append(s, cgroups...)
}
