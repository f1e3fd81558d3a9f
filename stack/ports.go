package stack

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CheckPortFree fails, naming whoever holds it where /proc tells, when a TCP port is taken.
func CheckPortFree(addr string, port int) error {
	hostport := net.JoinHostPort(addr, strconv.Itoa(port))
	l, err := net.Listen("tcp", hostport)
	if err != nil {
		return portInUse("port", hostport, portHolder("tcp", port))
	}
	return l.Close()
}

// CheckUDPPortFree is CheckPortFree for the UDP port an HTTP/3 (QUIC) listener needs: a TCP
// port can be free while another program holds the same number over UDP.
func CheckUDPPortFree(addr string, port int) error {
	hostport := net.JoinHostPort(addr, strconv.Itoa(port))
	c, err := net.ListenPacket("udp", hostport)
	if err != nil {
		return portInUse("UDP port", hostport, portHolder("udp", port))
	}
	return c.Close()
}

func portInUse(kind, hostport, holder string) error {
	return fmt.Errorf("%s %s is in use%s: stop it, or run `make down` if it is a stack left running", kind, hostport, holder)
}

// portHolder names the process holding a port, as " by pid N (command)", or "" when /proc does
// not say.
func portHolder(network string, port int) string {
	pid, comm := PortHolder(network, port)
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf(" by pid %d (%s)", pid, comm)
}

// Socket is one row of /proc/net/{tcp,udp}{,6}.
type Socket struct {
	Port  int
	State string // TCP: 0A is LISTEN; UDP: 07 is unconnected (a listener), 01 connected
	Inode string // what a /proc/<pid>/fd link names as "socket:[Inode]"
}

// Sockets are this network namespace's TCP or UDP sockets, IPv4 and IPv6 ("tcp" or "udp").
func Sockets(network string) []Socket {
	var out []Socket
	for _, f := range []string{"/proc/net/" + network, "/proc/net/" + network + "6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			// local_address is HEXIP:HEXPORT
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			i := strings.LastIndexByte(fields[1], ':')
			if p, err := strconv.ParseInt(fields[1][i+1:], 16, 32); err == nil {
				out = append(out, Socket{Port: int(p), State: fields[3], Inode: fields[9]})
			}
		}
		fh.Close()
	}
	return out
}

// PortHolder finds the process with a socket bound to a port (TCP: listening) through
// /proc/net/{tcp,udp}{,6} and fd links. Where several hold it (a master and its workers), it
// is the eldest of them, the one whose parent does not hold it: the root of the tree. 0 when
// /proc does not say.
func PortHolder(network string, port int) (int, string) {
	inodes := map[string]bool{}
	for _, so := range Sockets(network) {
		// UDP sockets have no listening state: any bound one holds the port
		if so.Port == port && (network != "tcp" || so.State == "0A") {
			inodes["socket:["+so.Inode+"]"] = true
		}
	}
	if len(inodes) == 0 {
		return 0, ""
	}
	holders := map[int]bool{}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && inodes[link] {
			if pid, err := strconv.Atoi(strings.Split(fd, "/")[2]); err == nil {
				holders[pid] = true
			}
		}
	}
	for pid := range holders {
		if !holders[parentPID(pid)] {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			return pid, strings.TrimSpace(string(comm))
		}
	}
	return 0, ""
}

// parentPID is the pid's parent from /proc/<pid>/stat, 0 when it cannot be read.
func parentPID(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := statFields(string(data))
	if len(f) < 4 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[3])
	return ppid
}
