package stack

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestProcessStartStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "p.log")
	// A parent that ignores SIGTERM's default handling in a child: both must end.
	p, err := StartProcess([]string{"sh", "-c", "echo started; sleep 300 & wait"}, os.Environ(), dir, log)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("process not alive after start")
	}
	time.Sleep(200 * time.Millisecond)
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

func TestProcessRecycledPIDIsNotOurs(t *testing.T) {
	t.Parallel()
	p := &Process{PID: os.Getpid(), StartTick: 1}
	if p.Alive() {
		t.Fatal("a pid whose start time differs counts as ours")
	}
}

func TestCheckPortFree(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	err = CheckPortFree("127.0.0.1", port)
	if err == nil {
		t.Fatal("a port in use counts as free")
	}
	for _, want := range []string{"127.0.0.1:" + strconv.Itoa(port) + " is in use", "pid " + strconv.Itoa(os.Getpid()), "make down"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	l.Close()
	if err := CheckPortFree("127.0.0.1", port); err != nil {
		t.Errorf("a freed port: %v", err)
	}
}
