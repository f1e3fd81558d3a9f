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
		holder := ""
		if pid, cmd := portHolder(port); pid > 0 {
			holder = fmt.Sprintf(" by pid %d (%s)", pid, cmd)
		}
		return fmt.Errorf("port %s is in use%s: stop it, or run `make down` if it is a stack left running", hostport, holder)
	}
	return l.Close()
}

// portHolder finds the process listening on a TCP port through /proc/net/tcp{,6} and fd links.
func portHolder(port int) (int, string) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// local_address is HEXIP:HEXPORT; state 0A is LISTEN.
			if len(fields) < 10 || fields[3] != "0A" {
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
		return 0, ""
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		link, err := os.Readlink(fd)
		if err != nil || !inodes[link] {
			continue
		}
		pidStr := strings.Split(fd, "/")[2]
		pid, _ := strconv.Atoi(pidStr)
		cmd, _ := os.ReadFile("/proc/" + pidStr + "/comm")
		return pid, strings.TrimSpace(string(cmd))
	}
	return 0, ""
}
