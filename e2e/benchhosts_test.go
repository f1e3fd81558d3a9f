package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/agent"
	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// TestBenchAcrossHosts is issue 40's bench for real: the stack and its agent in the stack's
// namespace (newTwoHosts), on its CPU; in the load's, on the other, the real CLI's `bench`
// with STACK and a copy of the token file in a run directory of its own, so that nothing of
// the stack host's files is read. Every figure of the stack's side must then have come
// through the agent: the upstream's counts, the TLS negotiated at up, the streams offered,
// and the target's CPU (its pid is in another namespace, which the load's /proc cannot see).
func TestBenchAcrossHosts(t *testing.T) {
	hosts := newTwoHosts(t)
	h := harnessAt(t, 3350, "nginx")
	tf := h.stackHost(t, hosts)

	loadRun, env := h.loadHostEnv(t, tf)
	const testid = "e2e-twohosts"
	cmd := h.proxybenchIn(hosts.Load, "bench", "-targets", "nginx", "-modes", "reused,fresh",
		"-protos", "h1c,h2,h3", "-testid", testid)
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	benchErr := cmd.Run()
	t.Logf("bench across hosts took %v (%v)", time.Since(t0).Round(time.Second), benchErr)

	// one probe, json, by the same CLI from the load host (bench's probe mode runs them all)
	probe := h.proxybenchIn(hosts.Load, "k6", "-scenario", "json", "-targets", "all", "-testid", testid+"-json")
	probe.Env = cmd.Env
	probeOut, probeErr := probe.CombinedOutput()
	if probeErr != nil {
		t.Errorf("proxybench k6 -scenario json from the load host: %v\n%s", probeErr, probeOut)
	}

	dir := filepath.Join(h.results, testid)
	if _, err := os.Stat(filepath.Join(dir, report.BenchFile)); err != nil {
		t.Fatalf("bench wrote no %s: %v (bench: %v)\n%s", report.BenchFile, err, benchErr, out.String())
	}
	if benchErr != nil {
		t.Errorf("proxybench bench from the load host: %v\n%s", benchErr, out.String())
	}
	// what the load host writes in its run directory is its own (the CA, its targets file):
	// never a stack's state
	if _, err := os.Stat(filepath.Join(loadRun, "state.json")); err == nil {
		t.Errorf("the load host's run directory has a state.json: the bench started a stack of its own")
	}
	b, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	load, stackHost, apart := b.Hosts()
	// the stack host's CPUs as its state.json records them: one, up pinned to its CPU
	if !apart || !strings.Contains(stackHost, hosts.Stack.IP) || !strings.Contains(stackHost, "CPUs: 1)") {
		t.Errorf("the report's hosts: load %q, stack %q, apart %v: want the stack host at %s, with its 1 CPU", load, stackHost, apart, hosts.Stack.IP)
	}
	if html, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil || !strings.Contains(string(html), "did not share CPUs") {
		t.Errorf("report.html does not say the load and the stack ran apart (%v)", err)
	}

	cells := 0
	for _, c := range b.Cells {
		if c.NoProto != "" {
			t.Errorf("%s %s: not run (%s): direct and nginx serve h1c, h2 and h3", c.Scenario, c.Target, c.NoProtoReason)
			continue
		}
		cells++
		if !c.Valid || len(c.Runs) == 0 {
			t.Errorf("%s %s: valid %v, %d runs: %v", c.Scenario, c.Target, c.Valid, len(c.Runs), c.Invalid)
		}
		for _, run := range c.Runs {
			r, err := result.LoadResult(filepath.Join(dir, run.File))
			if err != nil {
				t.Fatal(err)
			}
			checkAcrossHosts(t, c.Scenario+"/"+c.Target, r)
			if run.Resources == nil || run.Resources.TargetCPUSeconds <= 0 {
				t.Errorf("%s %s %s: no target CPU: %+v", c.Scenario, c.Target, c.Proto, run.Resources)
			}
		}
	}
	if want := 2 * 2 * 3; cells != want { // (reused, fresh) × (h1c, h2, h3) × (direct, nginx)
		t.Errorf("%d cells run, want %d", cells, want)
	}
	files, _ := filepath.Glob(filepath.Join(h.results, testid+"-json", "*.json"))
	if want := 2 * len(runner.ProbeProtos("json")); len(files) != want { // direct and nginx
		t.Errorf("%d json probe result files, want %d:\n%s", len(files), want, probeOut)
	}
	for _, f := range files {
		r, err := result.LoadResult(f)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Valid {
			t.Errorf("json %s %s: invalid: %v", r.Target, r.Proto, r.Invalid)
		}
		checkAcrossHosts(t, "json/"+r.Target, r)
	}
}

// loadHostEnv is the environment of a load host whose stack's agent wrote tf: STACK, and a copy
// of the token file in a run directory of its own (returned), so that nothing of the stack
// host's files is read.
func (h *harness) loadHostEnv(t *testing.T, tf agent.TokenFile) (loadRun string, env []string) {
	t.Helper()
	loadRun = t.TempDir() // empty: the load host's run directory
	token := filepath.Join(t.TempDir(), agent.TokenName)
	data, err := os.ReadFile(filepath.Join(h.run, agent.TokenName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(token, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return loadRun, []string{"PROXYBENCH_RUN=" + loadRun, "STACK=https://" + tf.Listen, "STACK_TOKEN=" + token}
}

// checkAcrossHosts fails unless run r has every figure of the stack's side, which only the
// agent could have given: the upstream's audit, and over TLS the profile negotiated and, for
// h2 and h3, the streams the target offered.
func checkAcrossHosts(t *testing.T, cell string, r *result.Result) {
	t.Helper()
	cell += "/" + r.Proto
	if u := r.UpstreamRequests; u == nil || u.Answered <= 0 || u.Completed <= 0 {
		t.Errorf("%s: no upstream audit (answered/completed): %+v", cell, u)
	}
	if r.UpstreamConns == nil {
		t.Errorf("%s: no upstream connection count", cell)
	}
	if r.Proto == string(stack.H1C) {
		return // no TLS
	}
	if r.TLS == nil || r.TLS.Version == "" || r.TLS.Group == "" {
		t.Errorf("%s: no TLS profile negotiated recorded: %+v", cell, r.TLS)
	}
	if r.Proto == string(stack.H1) {
		return // one request per connection at a time: no streams offered
	}
	if r.OfferedStreams == nil || *r.OfferedStreams <= 0 {
		t.Errorf("%s: no offered streams recorded: %v", cell, r.OfferedStreams)
	}
}
