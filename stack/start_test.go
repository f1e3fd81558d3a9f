package stack

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// A target that never answers must not be left running when its start-up fails.
func TestStartStopsATargetThatNeverGetsReady(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certs, err := EnsureCerts(dir, "bench.test")
	if err != nil {
		t.Fatal(err)
	}
	prober, err := NewProber("bench.test", "127.0.0.1", certs.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Stack{ReadyTimeout: 300 * time.Millisecond}
	r := &Running{Ports: Ports{H1C: port}, Protocols: []Protocol{H1C}}
	err = s.start(context.Background(), "silent", r, []string{"sleep", "300"}, os.Environ(), dir, prober)
	if err == nil || !strings.Contains(err.Error(), "target silent did not answer") {
		t.Fatalf("start error = %v", err)
	}
	if r.Alive() || groupAlive(r.PID) {
		t.Fatalf("pid %d still running after its start-up failed", r.PID)
	}
}
