package e2e

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proxybench/proxybench/agent"
	"github.com/proxybench/proxybench/stack"
)

// Two hosts on one machine (issue 40): two network namespaces joined by a veth pair, each with
// an address and a CPU of its own, so that a stack host and a load host share nothing but the
// kernel and the files. newTwoHosts makes them, h.stackHost brings a stack and its agent up in
// one, and a command runs in either with nsHost.Command.

// nsHost is one end of twoHosts: a network namespace, its address on the veth pair, the CPU
// its commands are pinned to.
type nsHost struct {
	Name string // the namespace, as `ip netns` names it
	IP   string // its address on the veth pair
	CPU  int
}

// Command runs name with args inside the namespace, pinned to its CPU. ip netns exec and
// taskset both exec what they run: the Cmd's pid is name's own, to signal and wait for.
func (n nsHost) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, "taskset", "-c", strconv.Itoa(n.CPU), name}, args...)...)
}

// Run runs Command to its end and returns its output, stdout and stderr together.
func (n nsHost) Run(name string, args ...string) (string, error) {
	out, err := n.Command(name, args...).CombinedOutput()
	return string(out), err
}

// twoHosts are a stack host and a load host on this machine.
type twoHosts struct {
	Stack, Load nsHost
}

// twoHostsNet is where the veth pair's /30 is taken: private, and far from what Docker, libvirt
// or a home network use.
var twoHostsNet = netip.MustParsePrefix("10.231.0.0/16")

// newTwoHosts makes two network namespaces named after this process (pb-stack-<pid>,
// pb-load-<pid>), loopback up in each, joined by a veth pair whose /30 no address or route of
// this host is in: the stack host at its first address, on the first CPU this process may
// use, the load host at its second, on the last. It skips the test, saying why, where no namespace can be made (not root,
// no ip), and deletes both when the test ends, failed or not, with any process left in them.
// The names are the process's: one pair at a time per test process (no parallel subtests).
func newTwoHosts(t *testing.T) *twoHosts {
	t.Helper()
	skipShort(t)
	pid := os.Getpid()
	hosts := &twoHosts{
		Stack: nsHost{Name: fmt.Sprintf("pb-stack-%d", pid)},
		Load:  nsHost{Name: fmt.Sprintf("pb-load-%d", pid)},
	}
	veth := [2]string{fmt.Sprintf("pbs%d", pid), fmt.Sprintf("pbl%d", pid)}
	if out, err := exec.Command("ip", "netns", "add", hosts.Stack.Name).CombinedOutput(); err != nil {
		t.Skipf("no network namespace can be made here (ip netns add %s: %v: %s): two hosts on one machine need root and iproute2",
			hosts.Stack.Name, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { deleteNamespaces(t, veth[0], hosts.Stack.Name, hosts.Load.Name) })
	subnet := freeSubnet(t, pid)
	hosts.Stack.IP, hosts.Load.IP = subnet.Addr().Next().String(), subnet.Addr().Next().Next().String()
	cpus, err := stack.AvailableCPUs()
	if err != nil {
		t.Fatal(err)
	}
	hosts.Stack.CPU, hosts.Load.CPU = cpus[0], cpus[len(cpus)-1]
	if len(cpus) == 1 {
		t.Logf("one CPU only (%d): both hosts share it", cpus[0])
	}
	bits := strconv.Itoa(subnet.Bits())
	for _, args := range [][]string{
		{"netns", "add", hosts.Load.Name},
		{"link", "add", veth[0], "netns", hosts.Stack.Name, "type", "veth", "peer", "name", veth[1], "netns", hosts.Load.Name},
		{"-n", hosts.Stack.Name, "addr", "add", hosts.Stack.IP + "/" + bits, "dev", veth[0]},
		{"-n", hosts.Load.Name, "addr", "add", hosts.Load.IP + "/" + bits, "dev", veth[1]},
		{"-n", hosts.Stack.Name, "link", "set", "lo", "up"},
		{"-n", hosts.Load.Name, "link", "set", "lo", "up"},
		{"-n", hosts.Stack.Name, "link", "set", veth[0], "up"},
		{"-n", hosts.Load.Name, "link", "set", veth[1], "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Logf("two hosts: %s %s on CPU %d, %s %s on CPU %d", hosts.Stack.Name, hosts.Stack.IP, hosts.Stack.CPU, hosts.Load.Name, hosts.Load.IP, hosts.Load.CPU)
	return hosts
}

// freeSubnet is a /30 of twoHostsNet that no address or route of this namespace overlaps,
// the first free from one the pid picks, so that two test processes at once take two.
func freeSubnet(t *testing.T, pid int) netip.Prefix {
	t.Helper()
	var taken []netip.Prefix
	for _, args := range [][]string{{"-o", "addr", "show"}, {"route", "show", "table", "all"}} {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		for _, f := range strings.Fields(string(out)) {
			if p, err := netip.ParsePrefix(f); err == nil {
				taken = append(taken, p)
			} else if a, err := netip.ParseAddr(f); err == nil {
				taken = append(taken, netip.PrefixFrom(a, a.BitLen()))
			}
		}
	}
	size := 1 << (32 - twoHostsNet.Bits() - 2) // the /30s of the range
	base := twoHostsNet.Addr().As4()
	for i := range size {
		n := (pid + i) % size * 4
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{base[0], base[1], byte(n >> 8), byte(n)}), 30)
		if !slices.ContainsFunc(taken, p.Overlaps) {
			return p
		}
	}
	t.Fatalf("no free /30 in %s: every one overlaps an address or route of this host", twoHostsNet)
	return netip.Prefix{}
}

// deleteNamespaces deletes the namespaces, the veth pair with them, after killing any process
// still in one (it can only be this test's: the namespaces are this process's own), which is
// an error: whatever the test started should have been stopped by then. It fails the test if
// anything is left.
func deleteNamespaces(t *testing.T, veth string, names ...string) {
	for _, ns := range names {
		out, err := exec.Command("ip", "netns", "pids", ns).Output()
		if err != nil {
			continue // never made
		}
		if pids := strings.Fields(string(out)); len(pids) > 0 {
			t.Errorf("namespace %s: processes %v still in it at the end of the test: killed", ns, pids)
			for _, p := range pids {
				if pid, err := strconv.Atoi(p); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns, err, out)
		}
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, ns := range names {
		if slices.ContainsFunc(strings.Split(string(out), "\n"), func(l string) bool { return strings.HasPrefix(l, ns+" ") || l == ns }) {
			t.Errorf("namespace %s is left after ip netns del", ns)
		}
	}
	if exec.Command("ip", "link", "show", veth).Run() == nil {
		t.Errorf("veth %s is left in this host's namespace", veth)
	}
}

// proxybenchIn is the real CLI, as `make` runs it, inside n.
func (h *harness) proxybenchIn(n nsHost, args ...string) *exec.Cmd {
	cmd := n.Command(filepath.Join(h.root, "bin", "proxybench"), args...)
	cmd.Dir, cmd.Env = h.root, h.env()
	return cmd
}

// stackHost brings h's stack up in hosts.Stack on its address (`make up STACK_LISTEN=<ip>`)
// and the agent beside it on its default port (`make agent STACK_LISTEN=<ip>`), and returns
// the token file the agent wrote, as a load host gets it. The agent stops, and the stack comes
// down, when the test ends.
func (h *harness) stackHost(t *testing.T, hosts *twoHosts) agent.TokenFile {
	t.Helper()
	out, err := h.proxybenchIn(hosts.Stack, "up", "-listen", hosts.Stack.IP).CombinedOutput()
	t.Cleanup(func() {
		if out, err := h.proxybenchIn(hosts.Stack, "down").CombinedOutput(); err != nil {
			t.Errorf("proxybench down: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("proxybench up -listen %s in %s: %v\n%s", hosts.Stack.IP, hosts.Stack.Name, err, out)
	}
	t.Log(string(out))
	return h.startAgent(t, hosts)
}

// startAgent starts the agent in hosts.Stack on its address and the default port (`make agent
// STACK_LISTEN=<ip>`), serving the stack up there, and returns the token file it wrote. It
// stops when the test ends.
func (h *harness) startAgent(t *testing.T, hosts *twoHosts) agent.TokenFile {
	t.Helper()
	path := filepath.Join(h.run, agent.TokenName)
	ag := h.proxybenchIn(hosts.Stack, "agent", "-listen", hosts.Stack.IP)
	agentOut := &syncBuffer{}
	ag.Stdout, ag.Stderr = agentOut, agentOut
	if err := ag.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- ag.Wait() }()
	t.Cleanup(func() {
		_ = ag.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("agent: %v\n%s", err, agentOut)
			}
		case <-time.After(10 * time.Second):
			_ = ag.Process.Kill()
			err := <-exited
			t.Errorf("agent: still serving 10 s after SIGTERM: killed (%v)\n%s", err, agentOut)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		data, err := os.ReadFile(path)
		if err == nil {
			var tf agent.TokenFile
			if err := json.Unmarshal(data, &tf); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return tf
		}
		select {
		case err := <-exited:
			t.Fatalf("agent ended before it served: %v\n%s", err, agentOut)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent: no %s after 10 s\n%s", path, agentOut)
		}
	}
}

// TestStackInNamespace: a stack host and a load host on one machine (newTwoHosts). In the
// stack's namespace, pinned to its CPU, `proxybench up -listen <ip>` brings direct and nginx up
// on that address and no other, `status` finds them there, and the agent serves them; from the
// load's namespace (the test's own client, its sockets made there) each is reached over h1 and
// h2 by the hostname and by the address, verified against the stack's CA, and through the agent
// the state (its listen, the address) and the upstream's counters are read and nginx restarted
// on the same address.
func TestStackInNamespace(t *testing.T) {
	hosts := newTwoHosts(t)
	h := harnessAt(t, 3250, "nginx")
	tf := h.stackHost(t, hosts)
	ip := hosts.Stack.IP

	st := readState(t, h.run)
	if st.Listen != ip {
		t.Errorf("state.json listen %q, want %s", st.Listen, ip)
	}
	if want := net.JoinHostPort(ip, strconv.Itoa(agent.DefaultPort)); tf.Listen != want {
		t.Errorf("the agent serves on %s, want %s (STACK_LISTEN and the default port)", tf.Listen, want)
	}
	if st.CPUs != 1 { // up ran under taskset -c <one CPU>: runtime.NumCPU follows the affinity
		t.Errorf("state.json cpus %d, want 1: the stack host's one CPU", st.CPUs)
	}
	checkPinned(t, st, hosts.Stack.CPU)
	checkListensOn(t, hosts.Stack, st, ip)
	for _, s := range socketsIn(t, hosts.Stack)["tcp"] {
		if s.Port() == agent.DefaultPort && s.Addr().String() != ip {
			t.Errorf("the agent's port is bound on %s too, want %s alone", s.Addr(), ip)
		}
	}

	// make status on the stack host probes where the stack listens
	if out, err := h.proxybenchIn(hosts.Stack, "status").CombinedOutput(); err != nil || !statusLine(string(out), "direct", "h1 ok, h1c ok, h2 ok, h3 ok") || !statusLine(string(out), "nginx", "h1 ok, h1c ok, h2 ok, h3 ok") {
		t.Errorf("status on the stack host: %v, want every protocol of direct and nginx ok:\n%s", err, out)
	}

	ca := stack.CertsIn(filepath.Join(h.run, "certs")).CAFile
	clients := map[string]*http.Client{
		"1.1": nsClient(t, hosts.Load, "h1", ca, h.cfg.Hostname, ip),
		"2":   nsClient(t, hosts.Load, "h2", ca, h.cfg.Hostname, ip),
	}
	for _, n := range []string{stack.Direct, "nginx"} {
		port := strconv.Itoa(st.Targets[n].Ports.TLS)
		for proto, c := range clients {
			for how, host := range map[string]string{"the hostname": h.cfg.Hostname, "the address": ip} {
				got, body, err := fetch(c, http.MethodGet, "https://"+net.JoinHostPort(host, port)+"/", "")
				if err != nil || got != proto || len(body) != stack.RootBodyBytes {
					t.Errorf("%s over HTTP/%s by %s from the load host: HTTP/%s, %d bytes (%v), want HTTP/%s, %d bytes", n, proto, how, got, len(body), err, proto, stack.RootBodyBytes)
				}
			}
		}
	}

	// the agent, as a load host reads it
	api := func(method, path string) []byte {
		t.Helper()
		_, body, err := fetch(clients["2"], method, "https://"+tf.Listen+path, tf.Token)
		if err != nil {
			t.Fatalf("%s %s from the load host: %v", method, path, err)
		}
		return body
	}
	var served stack.State
	if err := json.Unmarshal(api(http.MethodGet, "/v1/state"), &served); err != nil {
		t.Fatal(err)
	}
	if served.Listen != ip || served.Targets["nginx"] == nil || served.Targets["nginx"].PID != st.Targets["nginx"].PID {
		t.Errorf("GET /v1/state: listen %q, nginx %+v; want %s and pid %d", served.Listen, served.Targets["nginx"], ip, st.Targets["nginx"].PID)
	}
	// the upstream's counters, read by the agent at the address: the 4 GETs of / above to
	// direct on its TLS listener, and nginx's 4 on its cleartext one (probes at up add more)
	var counted map[string]map[string]struct{ Requests int }
	if err := json.Unmarshal(api(http.MethodGet, "/v1/upstream/served"), &counted); err != nil || counted["tls"]["/"].Requests < 4 || counted["h1c"]["/"].Requests < 4 {
		t.Errorf("GET /v1/upstream/served: %+v (%v), want 4 requests of / at least on tls and on h1c", counted, err)
	}
	var restarted stack.Running
	if err := json.Unmarshal(api(http.MethodPost, "/v1/targets/nginx/restart"), &restarted); err != nil {
		t.Fatal(err)
	}
	if restarted.PID == 0 || restarted.PID == st.Targets["nginx"].PID {
		t.Errorf("restart: nginx pid %d, want a new one (was %d)", restarted.PID, st.Targets["nginx"].PID)
	}
	st = readState(t, h.run)
	checkPinned(t, st, hosts.Stack.CPU)
	checkListensOn(t, hosts.Stack, st, ip)
	port := strconv.Itoa(st.Targets["nginx"].Ports.TLS)
	// a new connection: the restarted nginx's
	clients["2"].Transport.(*http.Transport).CloseIdleConnections()
	if got, _, err := fetch(clients["2"], http.MethodGet, "https://"+net.JoinHostPort(ip, port)+"/", ""); err != nil || got != "2" {
		t.Errorf("nginx after its restart, over HTTP/2 by the address: HTTP/%s (%v)", got, err)
	}
}

// checkPinned fails unless every process of the state's targets may run on cpu alone.
func checkPinned(t *testing.T, st *stack.State, cpu int) {
	t.Helper()
	for n, r := range st.Targets {
		for _, p := range processTree(r.PID) {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
			if err != nil {
				continue // a worker gone meanwhile
			}
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) != strconv.Itoa(cpu) {
					t.Errorf("target %s: pid %d may run on CPUs %s, want %d alone", n, p, strings.TrimSpace(v), cpu)
				}
			}
		}
	}
}

// checkListensOn fails unless every port of the state's targets (TCP; and UDP, the TLS port,
// where one serves h3) is bound in n's namespace on ip and on nothing else: not loopback, not
// every interface.
func checkListensOn(t *testing.T, n nsHost, st *stack.State, ip string) {
	t.Helper()
	bound := socketsIn(t, n)
	for name, r := range st.Targets {
		for network, ports := range targetPorts(r) {
			for _, port := range ports {
				var on []string
				for _, s := range bound[network] {
					if int(s.Port()) == port {
						on = append(on, s.Addr().String())
					}
				}
				if slices.Sort(on); !slices.Equal(slices.Compact(on), []string{ip}) {
					t.Errorf("target %s: %s port %d is bound on %v in %s, want %s alone", name, network, port, on, n.Name, ip)
				}
			}
		}
	}
}

// socketsIn are the TCP listeners and the bound UDP sockets of n's namespace, by network, from
// /proc/net as a process inside it reads it.
func socketsIn(t *testing.T, n nsHost) map[string][]netip.AddrPort {
	t.Helper()
	out := map[string][]netip.AddrPort{}
	for _, f := range []struct{ network, file, state string }{
		{"tcp", "tcp", "0A"}, {"tcp", "tcp6", "0A"}, // LISTEN
		{"udp", "udp", "07"}, {"udp", "udp6", "07"}, // unconnected: a listener
	} {
		table, err := n.Run("cat", "/proc/net/"+f.file)
		if err != nil {
			t.Fatalf("/proc/net/%s in %s: %v: %s", f.file, n.Name, err, table)
		}
		for _, line := range strings.Split(table, "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != f.state {
				continue
			}
			ap, err := procAddr(fields[1])
			if err != nil {
				t.Fatalf("/proc/net/%s: %q: %v", f.file, line, err)
			}
			out[f.network] = append(out[f.network], ap)
		}
	}
	return out
}

// procAddr reads /proc/net's HEXIP:HEXPORT, whose address is in 32-bit words of the host's
// (little-endian) order.
func procAddr(s string) (netip.AddrPort, error) {
	ipHex, portHex, _ := strings.Cut(s, ":")
	b, err := hex.DecodeString(ipHex)
	port, perr := strconv.ParseUint(portHex, 16, 16)
	if err != nil || perr != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, fmt.Errorf("%q: not an address and port", s)
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}
