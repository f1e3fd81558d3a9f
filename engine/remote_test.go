package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/agent"
	"github.com/proxybench/proxybench/extensions/upstream"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/stack"
)

// stackHost is a stack host on loopback: the real upstream (in this process, direct), its
// state, and the real agent serving it on 127.0.0.1:<port>, as `make up` and `make agent` leave
// a stack host. The load host's side then needs only the token file.
type stackHost struct {
	url, token string
	h1c        int // the upstream's port
	closed     int // nginx's port in the state, where nothing listens
	pid        int // direct's and nginx's pid in the state: this process
}

// serveUpstream serves the real upstream's cleartext listener on ip, until the test ends, and
// returns its port.
func serveUpstream(t *testing.T, ip string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := upstream.Serve(upstream.Listeners{H1C: ln}, upstream.Config{UploadLimit: 1 << 20, ErrorLog: log.New(io.Discard, "", 0)})
	t.Cleanup(srv.Close)
	return ln.Addr().(*net.TCPAddr).Port
}

func startStackHost(t *testing.T) stackHost {
	t.Helper()
	dir := t.TempDir()
	cfg, err := stack.LoadConfig("../targets.json")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := stack.EnsureCerts(filepath.Join(dir, "certs"), cfg.Hostname)
	if err != nil {
		t.Fatal(err)
	}
	h := stackHost{h1c: serveUpstream(t, "127.0.0.1"), pid: os.Getpid()}
	// nginx: up in the state, its port closed (a process that no longer answers)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.closed = closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	st := stack.State{Started: time.Now(), Targets: map[string]*stack.Running{
		stack.Direct: {Process: stack.Adopt(h.pid), Ports: stack.Ports{TLS: cfg.Targets[stack.Direct].TLS, H1C: h.h1c}, Protocols: []stack.Protocol{stack.H1C}},
		"nginx":      {Process: stack.Adopt(h.pid), Ports: stack.Ports{TLS: cfg.Targets["nginx"].TLS, H1C: h.closed}, Protocols: []stack.Protocol{stack.H1C}},
	}}
	if err := stack.WriteJSON(filepath.Join(dir, "state.json"), st); err != nil {
		t.Fatal(err)
	}
	// what agent.ListenAndServe does, in its parts: the token file is written before it serves
	ca, err := certs.Authority()
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(certs.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	aln, err := agent.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := agent.Leaf(ca, aln)
	if err != nil {
		t.Fatal(err)
	}
	h.token = filepath.Join(dir, agent.TokenName)
	tf, err := agent.WriteToken(h.token, aln.Addr().String(), caPEM)
	if err != nil {
		t.Fatal(err)
	}
	h.url = "https://" + tf.Listen
	s := &stack.Stack{Paths: stack.Paths{RunDir: dir}, Config: cfg}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agent.Serve(ctx, aln, agent.New(s, tf.Token, caPEM), cert) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	})
	return h
}

// dialStackHost is a stack host on loopback and the load host's side of it, dialled as STACK
// would (its files in dir), with the clone's targets.json.
func dialStackHost(t *testing.T, dir string) (stackHost, *RemoteStack, *stack.Config) {
	t.Helper()
	host := startStackHost(t)
	local, err := stack.LoadConfig("../targets.json")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := DialStack(context.Background(), host.url, host.token, dir, local)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Agent.Close)
	return host, rs, local
}

// TestRunOnARemoteStack runs reused-h1c against direct on a stack reached only through its
// agent (STACK), and again with the runner reading the same stack locally: both runs are
// valid, the remote one's target CPU comes from the agent (the pid it is given exists on no
// host: only the agent, sampling by name, can measure it), its client's from this host, and
// both count the upstream's connections alike.
func TestRunOnARemoteStack(t *testing.T) {
	if testing.Short() {
		t.Skip("needs bin/k6 (make bin/k6)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "k6")); err != nil {
		t.Fatalf("bin/k6 is missing: run `make bin/k6` first: %v", err)
	}
	host, rs, local := dialStackHost(t, t.TempDir())
	ctx := context.Background()
	if rs.Config.Targets[stack.Direct].H1C != host.h1c || rs.Config.Upstream.H1C != host.h1c || rs.Config.Address != "127.0.0.1" {
		t.Errorf("the load host's targets: address %s, direct %+v, upstream %+v; want 127.0.0.1 and the state's port %d",
			rs.Config.Address, rs.Config.Targets[stack.Direct], rs.Config.Upstream, host.h1c)
	}
	s := &stack.Stack{Paths: stack.Paths{Root: root}, Config: local}
	var out bytes.Buffer
	entry, _ := scenarios.Lookup("reused-h1c")
	j := runner.JobOf(entry, stack.Direct, "")
	j.Env = []string{"DURATION=2s", "WARMUP=1s", "CONNECTIONS=2"}
	const nowhere = 1 << 30 // above any pid_max

	remote := rs.Runner(s, RunnerOptions{ResultsDir: t.TempDir(), Profile: "smoke"})
	remote.Stdout, remote.Stderr = &out, &out
	res, rsc := K6{Runner: remote}.Sampled(ctx, "remote", j, nowhere, nowhere)
	if res.Err != "" || !res.Valid {
		t.Fatalf("the remote run: %s %v\n%s", res.Err, res.Invalid, out.String())
	}
	if rsc == nil || rsc.TargetCPUSeconds <= 0 || rsc.TargetProcs < 1 || rsc.ClientCPUSeconds <= 0 || rsc.ClientCPUs < 1 {
		t.Fatalf("the remote run's resources %+v: want the target's CPU from the agent and the client's from here\n%s", rsc, out.String())
	}
	if rsc.LoadHost == nil || rsc.LoadHost.MachineCPUSeconds <= 0 {
		t.Errorf("the remote run's resources keep no outside load of the load host: %+v", rsc.LoadHost)
	}
	if res.OutsideLoad == nil || res.Cost == nil || res.Cost.TargetCPUMicros <= 0 {
		t.Errorf("the remote run's result: outside load %+v, cost %+v; want both", res.OutsideLoad, res.Cost)
	}

	here, err := NewRunner(&stack.Stack{Paths: stack.Paths{Root: root, TargetsFile: rs.TargetsFile, RunDir: t.TempDir()}, Config: rs.Config}, RunnerOptions{ResultsDir: t.TempDir(), Profile: "smoke"})
	if err != nil {
		t.Fatal(err)
	}
	here.CAFile = rs.CAFile
	here.Stdout, here.Stderr = &out, &out
	resHere, _ := K6{Runner: here}.Sampled(ctx, "local", j, host.pid, host.pid)
	if resHere.Err != "" || !resHere.Valid {
		t.Fatalf("the local run: %s %v\n%s", resHere.Err, resHere.Invalid, out.String())
	}
	if res.UpstreamConns == nil || resHere.UpstreamConns == nil || res.UpstreamConns.Opened != resHere.UpstreamConns.Opened || res.UpstreamConns.Opened < 2 {
		t.Errorf("upstream connections opened: remote %+v, local %+v; want the same, at least the 2 the run held", res.UpstreamConns, resHere.UpstreamConns)
	}
	if strings.Contains(out.String(), "warning:") {
		t.Errorf("the runs warned:\n%s", out.String())
	}
}

// The load host's files say where the stack is, and the manifest which host ran what: nothing
// of the stack host's install or rendered configs is read here.
func TestLoadHostFilesAndManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	host, rs, local := dialStackHost(t, dir)
	data, err := os.ReadFile(filepath.Join(dir, "targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var written stack.Config
	if err := json.Unmarshal(data, &written); err != nil {
		t.Fatal(err)
	}
	if written.Address != "127.0.0.1" || written.Targets[stack.Direct].H1C != host.h1c || written.Targets["nginx"].H1C != host.closed || written.Targets["caddy"] != local.Targets["caddy"] || written.Hostname != local.Hostname {
		t.Errorf("the load host's targets file: %s\nwant the agent's address, the state's port %d for direct, targets.json's for the others", data, host.h1c)
	}
	if _, err := stack.NewProber(local.Hostname, "127.0.0.1", rs.CAFile); err != nil {
		t.Errorf("the CA written: %v", err)
	}

	root, _ := filepath.Abs("..")
	m := Manifest(context.Background(), &stack.Stack{Paths: stack.Paths{Root: root, RunDir: t.TempDir(), TargetsFile: "../targets.json"}, Config: local}, &rs.State.State, "true", []string{stack.Direct}, "smoke")
	m["config_hashes"].(map[string]string)["nginx/nginx.conf"] = "sha256:another stack's"
	m["installed_from"] = map[string]string{"nginx": "this host's cache"}
	rs.Apart(m)
	hosts, _ := m["hosts"].(map[string]any)
	stackHost, _ := hosts["stack"].(map[string]any)
	if stackHost["address"] != "127.0.0.1" || stackHost["cpus"] != "not reported by the stack host" || hosts["load"] == nil {
		t.Errorf("manifest hosts %v: want the stack at 127.0.0.1, its CPUs not reported, the load host", hosts)
	}
	if _, ok := m["config_hashes"].(map[string]string)["nginx/nginx.conf"]; ok || m["installed_from"] != nil {
		t.Errorf("the manifest keeps this host's rendered config or install: %v %v", m["config_hashes"], m["installed_from"])
	}
	if !strings.HasPrefix(m["pinning"].(string), "none: the load on ") {
		t.Errorf("pinning %q", m["pinning"])
	}
}

// After a run, a remote target is checked by the stack host's state and a verified GET from
// the load host; a restart goes through the agent and says the agent's reason.
func TestRemoteTargets(t *testing.T) {
	t.Parallel()
	host, rs, _ := dialStackHost(t, t.TempDir())
	targets := RemoteTargets{Stack: rs}
	tests := []struct {
		name, target string
		pid          int
		what         string // "": alive
		gone         bool
	}{
		{"up and answering", stack.Direct, host.pid, "", false},
		{"another process now", stack.Direct, host.pid + 1, "is no longer in the stack host's state", true},
		{"up, not answering", "nginx", host.pid, "did not answer a verified GET over h1c", false},
		{"never up", "caddy", 1, "is no longer in the stack host's state", true},
	}
	for _, tt := range tests {
		what, gone := targets.Check(tt.target, tt.pid)
		if gone != tt.gone || (tt.what == "") != (what == "") || !strings.Contains(what, tt.what) {
			t.Errorf("%s: Check(%s, %d) = %q, %v; want %q, %v", tt.name, tt.target, tt.pid, what, gone, tt.what, tt.gone)
		}
	}
	if _, err := targets.Restart(context.Background(), "caddy"); err == nil || !strings.Contains(err.Error(), "caddy is not up") {
		t.Errorf("Restart of a target not up: %v; want the agent's reason", err)
	}
	if path, _ := targets.Log("nginx"); !strings.Contains(path, "on the stack host") {
		t.Errorf("Log: %q; want where it is on the stack host", path)
	}
}
