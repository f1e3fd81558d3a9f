package stack

import (
	"context"
	"fmt"
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

// A proxy that needs a control port (GoDoxy's API) is not started without one from
// targets.json: it would listen where the stack did not say.
func TestCommandNeedsAdminPort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "proxies/p/target.json", `{"config":"c.tmpl","command":["sh"],"version":["sh"],"protocols":["h1c"],"admin_port":true}`)
	writeFile(t, dir, "proxies/p/c.tmpl", "api {{.AdminPort}}\n")
	d, err := LoadDefinition(dir+"/proxies", "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		ports Ports
		want  string // "" for no error
	}{
		{"no admin port", Ports{TLS: 8441, H1C: 8081}, `targets.p in targets.json has no "admin" port`},
		{"admin port", Ports{TLS: 8441, H1C: 8081, Admin: 8090}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Stack{
				Paths:  Paths{RunDir: t.TempDir(), TargetsFile: "targets.json", CacheDir: t.TempDir()},
				Config: &Config{Address: "127.0.0.1", Targets: map[string]Ports{"p": tc.ports}},
			}
			_, err := s.command("p", d, Certs{})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(d.ConfigFile(s.RunDir + "/p"))
				if string(got) != "api 8090\n" {
					t.Errorf("rendered %q, want the admin port in it", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("command error = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// One controller per run directory: a second `up` or `bench` is told who runs, and the
// directory is free again once the first lets go (or dies: the kernel drops a flock).
func TestLockSaysWhoHoldsTheRunDirectory(t *testing.T) {
	t.Parallel()
	s := &Stack{Paths: Paths{RunDir: t.TempDir()}}
	unlock, err := s.Lock("bench")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Lock("up")
	want := fmt.Sprintf("is in use by `proxybench bench` (pid %d, started ", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second Lock: %v, want it to say %q", err, want)
	}
	unlock()
	unlock, err = s.Lock("up")
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock()
}
