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

// portHolder finds the process with a socket bound to a port (TCP: listening) through
// /proc/net/{tcp,udp}{,6} and fd links, as " by pid N (command)", or "" when /proc does not say.
func portHolder(network string, port int) string {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/" + network, "/proc/net/" + network + "6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// local_address is HEXIP:HEXPORT; TCP state 0A is LISTEN (UDP sockets have no
			// listening state: any bound one holds the port).
			if len(fields) < 10 || (network == "tcp" && fields[3] != "0A") {
				continue
			}
			i := strings.LastIndexByte(fields[1], ':')
			p, err := strconv.ParseInt(fields[1][i+1:], 16, 32)
			if err == nil && int(p) == port {
				inodes["socket:["+fields[9]+"]"] = true
			}
		}
		fh.Close()
	}
	if len(inodes) == 0 {
		return ""
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		link, err := os.Readlink(fd)
		if err != nil || !inodes[link] {
			continue
		}
		pidStr := strings.Split(fd, "/")[2]
		cmd, _ := os.ReadFile("/proc/" + pidStr + "/comm")
		return fmt.Sprintf(" by pid %s (%s)", pidStr, strings.TrimSpace(string(cmd)))
	}
	return ""
}
