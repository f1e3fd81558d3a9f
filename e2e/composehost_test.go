package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/proxybench/proxybench/stack"
)

// composeStackHost runs the compose stack as the stack host of two (issue 40): an engine whose
// dockerd, and with it every container on the host's network, is in the stack's namespace on
// its CPU (newTwoHosts); the stack up there with STACK_LISTEN=<its address>, as `make
// compose-up STACK_LISTEN=<ip>` brings it up, adopted by `attach -listen` and served by the
// agent beside it; from the load's namespace, reused-h2 against every target through the agent,
// each cell with the figures only the agent could give.
func (h *harness) composeStackHost(ctx context.Context, t *testing.T, profiles []string) {
	hosts := newTwoHosts(t)
	ip := hosts.Stack.IP
	e := startEngineIn(t, h.root, &hosts.Stack)
	c := h.composeStack(ctx, t, e, "proxybench-e2e-stackhost", append(slices.Clone(profiles), "STACK_LISTEN="+ip), false)
	c.up() // every healthcheck answered on the address

	out, err := h.proxybenchIn(hosts.Stack, "attach", "-listen", ip).CombinedOutput()
	if err != nil {
		t.Fatalf("proxybench attach -listen %s in %s: %v\n%s", ip, hosts.Stack.Name, err, out)
	}
	st := readState(t, h.run)
	if st.Engine != stack.EngineCompose || st.Listen != ip {
		t.Errorf("state.json after attach: engine %q, listen %q; want %q and %s", st.Engine, st.Listen, stack.EngineCompose, ip)
	}
	checkListensOn(t, hosts.Stack, st, ip)
	checkLeafNames(t, stack.CertsIn(filepath.Join(h.run, "certs")).CertFile, ip)

	tf := h.startAgent(t, hosts)
	_, env := h.loadHostEnv(t, tf)
	const testid = "e2e-docker-stackhost"
	k6 := h.proxybenchIn(hosts.Load, "k6", "-scenario", "reused-h2", "-targets", "all", "-testid", testid)
	k6.Env = append(k6.Env, env...)
	if out, err := k6.CombinedOutput(); err != nil {
		t.Errorf("proxybench k6 reused-h2 from the load host, through the agent: %v\n%s", err, stack.LastLines(string(out), 30))
	}
	n := 0
	for _, r := range loadResults(t, filepath.Join(h.results, testid)) {
		if r.Skipped != "" {
			continue
		}
		checkResult(t, "reused-h2", r)
		checkAcrossHosts(t, "reused-h2/"+r.Target, r)
		n++
		t.Logf("stack host %s: reused-h2/%s: %.0f req/s, p99 %.2f ms", ip, r.Target, deref(r.RPS), r.Latency.P99)
	}
	if n != len(st.Targets) {
		t.Errorf("%d reused-h2 cells measured from the load host, want one per attached target (%d)", n, len(st.Targets))
	}
}

// checkLeafNames fails unless the leaf certificate in file is valid for ip, so that a load
// host verifies the targets there.
func checkLeafNames(t *testing.T, file, ip string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s: no PEM block", file)
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname(ip); err != nil {
		t.Errorf("the leaf the certs service made does not name the stack host's address: %v", err)
	}
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
