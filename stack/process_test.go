package stack

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProcessStartStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "p.log")
	// A parent that ignores SIGTERM's default handling in a child: both must end.
	p, err := StartProcess([]string{"sh", "-c", "sleep 300 & echo started; wait"}, os.Environ(), dir, log)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("process not alive after start")
	}
	waitLogLine(t, log, "started") // the child is there
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Alive() || groupAlive(p.PID) {
		t.Fatal("process or its child still alive after Stop")
	}
	if got := Tail(log, 5); got != "started" {
		t.Errorf("log tail = %q", got)
	}
}

// A stopped group is seen as stopped, and Stop ends it within its grace, by SIGTERM: a stopped
// process acts on no signal but SIGKILL until it is continued.
func TestProcessStoppedIsSeenAndStopped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := StartProcess([]string{"sh", "-c", "trap 'echo term; exit 0' TERM; sleep 300 & echo trapped; wait"}, os.Environ(), dir, filepath.Join(dir, "p.log"))
	if err != nil {
		t.Fatal(err)
	}
	waitLogLine(t, filepath.Join(dir, "p.log"), "trapped") // the trap is set
	if p.Stopped() {
		t.Fatal("Stopped() before SIGSTOP")
	}
	if err := syscall.Kill(-p.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !p.Stopped() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !p.Stopped() || !p.Alive() {
		t.Fatalf("after SIGSTOP: Stopped() = %v, Alive() = %v; want both true", p.Stopped(), p.Alive())
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Alive() || groupAlive(p.PID) {
		t.Fatal("stopped group still alive after Stop")
	}
	if got := Tail(filepath.Join(dir, "p.log"), 1); got != "term" {
		t.Errorf("log tail = %q, want term: the group was killed, not terminated", got)
	}
}

// waitLogLine waits until the last line of log is line: what the process says once it is ready.
func waitLogLine(t *testing.T, log, line string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); Tail(log, 1) != line; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never ended with %q: %q", log, line, Tail(log, 5))
		}
	}
}

func TestProcessRecycledPIDIsNotOurs(t *testing.T) {
	t.Parallel()
	p := &Process{PID: os.Getpid(), StartTick: 1}
	if p.Alive() {
		t.Fatal("a pid whose start time differs counts as ours")
	}
}

func TestCheckPortFree(t *testing.T) {
	t.Parallel()
	tests := []struct {
		network string
		hold    func() (io.Closer, int, error)
		check   func(addr string, port int) error
		kind    string
	}{
		{"tcp", func() (io.Closer, int, error) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, 0, err
			}
			return l, l.Addr().(*net.TCPAddr).Port, nil
		}, CheckPortFree, "port"},
		{"udp", func() (io.Closer, int, error) {
			c, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				return nil, 0, err
			}
			return c, c.LocalAddr().(*net.UDPAddr).Port, nil
		}, CheckUDPPortFree, "UDP port"},
	}
	for _, tc := range tests {
		t.Run(tc.network, func(t *testing.T) {
			t.Parallel()
			held, port, err := tc.hold()
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			err = tc.check("127.0.0.1", port)
			if err == nil {
				t.Fatal("a port in use counts as free")
			}
			for _, want := range []string{tc.kind + " 127.0.0.1:" + strconv.Itoa(port) + " is in use", "pid " + strconv.Itoa(os.Getpid()), "make down"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			held.Close()
			if err := tc.check("127.0.0.1", port); err != nil {
				t.Errorf("a freed port: %v", err)
			}
		})
	}
}
