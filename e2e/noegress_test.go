package e2e

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/stack"
)

// inNamespaceEnv marks the copy of the tests that runs inside the namespace (not to nest again).
const inNamespaceEnv = "E2E_IN_NETNS"

// Nothing in the suite needs or tries the internet at run time: with the installs cached, the
// stack test (every scenario, streamed into InfluxDB) and the bench with its report pass again
// inside a network namespace whose only interface is loopback. Direct and nginx only: the
// point is the network, which every target reaches the same way.
func TestNoEgress(t *testing.T) {
	if os.Getenv(inNamespaceEnv) != "" {
		t.Skip("already inside the namespace")
	}
	skipShort(t)
	unshare := []string{"unshare", "-n"}
	if os.Geteuid() != 0 {
		unshare = []string{"unshare", "-rn"} // a user namespace makes it unprivileged
	}
	// the namespace must exist and be cut off, or this test proves nothing
	probe := exec.Command(unshare[0], append(unshare[1:], "sh", "-c", "ip link set lo up && cat /proc/net/dev")...)
	out, err := probe.CombinedOutput()
	if err != nil {
		t.Skipf("no network namespace can be made here (%s: %v: %s): the no-egress run is skipped", strings.Join(unshare, " "), err, strings.TrimSpace(string(out)))
	}
	if ifaces := netDevices(string(out)); len(ifaces) != 1 || ifaces[0] != "lo" {
		t.Fatalf("the namespace has interfaces %v, want loopback only", ifaces)
	}

	script := `ip link set lo up && exec "$0" -test.run '^(TestStackEndToEnd|TestBenchReport)$' -test.count=1 -test.timeout=25m -test.v`
	cmd := exec.Command(unshare[0], append(unshare[1:], "sh", "-c", script, os.Args[0])...)
	cmd.Env = append(os.Environ(), inNamespaceEnv+"=1", "E2E_TARGETS=nginx",
		"E2E_PORT_OFFSET="+strconv.Itoa(portOffset(t)+1350))
	res, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the stack test and the bench inside a namespace with loopback only: %v\n%s", err, stack.LastLines(string(res), 80))
	}
	for _, want := range []string{"--- PASS: TestStackEndToEnd", "--- PASS: TestBenchReport"} {
		if !strings.Contains(string(res), want) {
			t.Errorf("inside the namespace: no %q (skipped?):\n%s", want, stack.LastLines(string(res), 80))
		}
	}
}

// netDevices are the interface names of a /proc/net/dev listing.
func netDevices(dev string) []string {
	var out []string
	for _, line := range strings.Split(dev, "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}
