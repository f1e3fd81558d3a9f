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
// point is the network, which every target reaches the same way. TestNoEgress runs the stack
// test there; TestBenchReport runs there itself (inNamespace), rather than twice.
func TestNoEgress(t *testing.T) {
	if os.Getenv(inNamespaceEnv) != "" {
		t.Skip("already inside the namespace")
	}
	skipShort(t)
	unshare, why := loopbackNamespace(t)
	if unshare == nil {
		t.Skip(why)
	}
	runInNamespace(t, unshare, "TestStackEndToEnd", "E2E_TARGETS=nginx", "E2E_PORT_OFFSET="+strconv.Itoa(portOffset(t)+1350))
}

// inNamespace runs test name again inside a namespace with loopback only, with the
// environment it has here, and tells whether it did; if so, the caller returns: the copy there
// was the test. Where no namespace can be made, it says so and the caller runs as it is.
func inNamespace(t *testing.T, name string) bool {
	t.Helper()
	if os.Getenv(inNamespaceEnv) != "" {
		return false
	}
	unshare, why := loopbackNamespace(t)
	if unshare == nil {
		t.Logf("%s: not proved to run without egress: %s", name, why)
		return false
	}
	runInNamespace(t, unshare, name)
	return true
}

// loopbackNamespace is the unshare command that makes a network namespace here, or nil and why
// none can be made; it fails the test when the namespace is not cut off, or it would prove
// nothing.
func loopbackNamespace(t *testing.T) (unshare []string, why string) {
	t.Helper()
	unshare = []string{"unshare", "-n"}
	if os.Geteuid() != 0 {
		unshare = []string{"unshare", "-rn"} // a user namespace makes it unprivileged
	}
	probe := exec.Command(unshare[0], append(unshare[1:], "sh", "-c", "ip link set lo up && cat /proc/net/dev")...)
	out, err := probe.CombinedOutput()
	if err != nil {
		return nil, "no network namespace can be made here (" + strings.Join(unshare, " ") + ": " + err.Error() + ": " + strings.TrimSpace(string(out)) + "): the no-egress run is skipped"
	}
	if ifaces := netDevices(string(out)); len(ifaces) != 1 || ifaces[0] != "lo" {
		t.Fatalf("the namespace has interfaces %v, want loopback only", ifaces)
	}
	return unshare, ""
}

// runInNamespace runs test name of this binary inside the namespace, env added, and fails the
// test unless it passed there.
func runInNamespace(t *testing.T, unshare []string, name string, env ...string) {
	t.Helper()
	script := `ip link set lo up && exec "$0" -test.run "^$1\$" -test.count=1 -test.timeout=25m -test.v`
	cmd := exec.Command(unshare[0], append(unshare[1:], "sh", "-c", script, os.Args[0], name)...)
	cmd.Env = append(append(os.Environ(), inNamespaceEnv+"=1"), env...)
	res, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s inside a namespace with loopback only: %v\n%s", name, err, stack.LastLines(string(res), 80))
	}
	if want := "--- PASS: " + name; !strings.Contains(string(res), want) {
		t.Errorf("inside the namespace: no %q (skipped?):\n%s", want, stack.LastLines(string(res), 80))
	}
	t.Logf("%s passed inside a namespace with loopback only", name)
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
