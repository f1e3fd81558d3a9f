package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/stack"
)

// checkListeners holds every target up to its ports: it listens on its TLS, cleartext and admin
// ports over TCP and, where it serves h3, on its TLS port over UDP, and on nothing else.
func (h *harness) checkListeners(t *testing.T) {
	t.Helper()
	st := readState(t, h.run)
	for n, r := range st.Targets {
		want := targetPorts(r)
		got := listening(t, r.PID)
		for _, network := range []string{"tcp", "udp"} {
			slices.Sort(want[network])
			if !slices.Equal(got[network], want[network]) {
				t.Errorf("target %s (pid %d) is bound to %s ports %v, want exactly %v (targets.json)", n, r.PID, network, got[network], want[network])
			}
		}
	}
}

// targetPorts are the ports a target must listen on, by network: its TLS, cleartext and admin
// ports over TCP and, where it serves h3, its TLS port over UDP.
func targetPorts(r *stack.Running) map[string][]int {
	want := map[string][]int{}
	for _, p := range r.Ports.TCP() {
		want["tcp"] = append(want["tcp"], p.Port)
	}
	if slices.Contains(r.Protocols, stack.H3) {
		want["udp"] = []int{r.Ports.TLS}
	}
	return want
}

// listening are the TCP ports a process and its descendants listen on and the UDP ports they
// hold unconnected (a QUIC listener), sorted, from /proc.
func listening(t *testing.T, pid int) map[string][]int {
	t.Helper()
	inodes := map[string]bool{}
	for _, p := range processTree(pid) {
		fds, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(p), "fd", "*"))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	if len(inodes) == 0 {
		t.Fatalf("pid %d: no sockets in /proc/%d/fd (is it running, and are its fds readable?)", pid, pid)
	}
	// a listener: TCP's LISTEN (0A), an unconnected UDP socket (07)
	out := map[string][]int{}
	for network, state := range map[string]string{"tcp": "0A", "udp": "07"} {
		for _, so := range stack.Sockets(network) {
			if so.State == state && inodes[so.Inode] && !slices.Contains(out[network], so.Port) {
				out[network] = append(out[network], so.Port)
			}
		}
		slices.Sort(out[network])
	}
	return out
}

// processTree is pid and every descendant of it (nginx's workers), from /proc/*/stat.
func processTree(pid int) []int {
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid …": comm may hold spaces, so split after its last ")"
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		p, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		pp, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			parent[p] = pp
		}
	}
	tree := []int{pid}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if slices.Contains(tree, pp) && !slices.Contains(tree, p) {
				tree = append(tree, p)
				changed = true
			}
		}
	}
	return tree
}
