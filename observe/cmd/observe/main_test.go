package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/stack"
)

// TestAttachComposeInfluxDB: an InfluxDB that someone else started (compose's observe profile;
// here a real influxd started by the test, as the container's process would be) is adopted by
// attach, so that env makes k6 stream into it; down leaves it running and says who stops it,
// and forgets it once it is gone.
func TestAttachComposeInfluxDB(t *testing.T) {
	if testing.Short() {
		t.Skip("needs influxd (make influxd): not in the fast tier, go test -short")
	}
	bin, err := observe.InstalledBinary()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := observe.Start(ctx, bin, filepath.Join(t.TempDir(), "influxdb"), addr, observe.DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(10 * time.Second) })
	run := t.TempDir()
	t.Setenv("PROXYBENCH_RUN", run)
	t.Setenv("INFLUXDB_ADDR", addr)

	if err := attach(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := running()
	if err != nil || st == nil {
		t.Fatalf("attached InfluxDB is not running: %v %v", st, err)
	}
	if st.Engine != stack.EngineCompose || st.PID != srv.PID {
		t.Errorf("attached engine %q pid %d, want %q pid %d (the process holding %s)", st.Engine, st.PID, stack.EngineCompose, srv.PID, addr)
	}
	if got := strings.Join(st.K6Env(), " "); !strings.Contains(got, "K6_INFLUXDB_ADDR=http://"+addr) {
		t.Errorf("env %q does not point k6 at %s", got, addr)
	}
	if err := down(); err == nil || !strings.Contains(err.Error(), "compose-down") {
		t.Errorf("down of compose's InfluxDB: want a refusal naming `make compose-down`, got %v", err)
	}
	if !srv.Alive() {
		t.Fatal("down stopped compose's InfluxDB")
	}
	if err := srv.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := down(); err != nil {
		t.Errorf("down once compose's InfluxDB is gone: %v", err)
	}
	if _, err := os.Stat(observe.StatePath(run)); !os.IsNotExist(err) {
		t.Errorf("state %s still there after down: %v", observe.StatePath(run), err)
	}
}
