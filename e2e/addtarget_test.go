package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// TestAddTargetIsAFolder proves what the README promises: a proxy is added by a folder under
// proxies/ and its ports in targets.json, with no code change. It copies nginx's folder as a
// throwaway target with a config of its own (a marker header), brings it up through the real
// CLI and runs a scenario on it.
func TestAddTargetIsAFolder(t *testing.T) {
	t.Setenv("E2E_PORT_OFFSET", strconv.Itoa(portOffset(t)+300))
	t.Setenv("E2E_TARGETS", stack.Direct)
	h := newHarness(t)
	const name = "nginx-alt"

	proxies := t.TempDir()
	copyHelpers(t, filepath.Join(h.root, "proxies"), proxies)
	// In the location itself: nginx drops add_header inherited from an outer level as soon as
	// a level in between has one of its own (the server's Alt-Svc).
	h.copyNginx(t, proxies, name, "add_header X-Proxybench-Target {{.Name}} always;")
	t.Setenv("PROXYBENCH_PROXIES", proxies)

	h.addTargets(t, 50, name)

	out, err := h.proxybench(t, "up")
	t.Cleanup(func() {
		if out, err := h.proxybench(t, "down"); err != nil {
			t.Errorf("down: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("up with a target added as a folder: %v\n%s", err, out)
	}

	// The folder's own config is what serves: its marker comes back.
	url := fmt.Sprintf("http://127.0.0.1:%d/", h.cfg.Targets[name].H1C)
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("X-Proxybench-Target"); got != name {
		t.Errorf("GET %s: X-Proxybench-Target = %q, want %q (the added folder's config)", url, got, name)
	}

	out, err = h.proxybench(t, "k6", "-scenario", "reused-h1c", "-targets", name, "-testid", "e2e-add")
	if err != nil {
		t.Fatalf("reused-h1c on %s: %v\n%s", name, err, out)
	}
	r, err := runner.LoadResult(filepath.Join(h.results, "e2e-add", "reused-h1c-"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, "reused-h1c", r)
}

// addTargets gives each named target ports of its own, from direct's plus offset, in the test's
// targets file.
func (h *harness) addTargets(t *testing.T, offset int, names ...string) {
	t.Helper()
	d := h.cfg.Targets[stack.Direct]
	for i, n := range names {
		h.cfg.Targets[n] = stack.Ports{TLS: d.TLS + offset + i, H1C: d.H1C + offset + i}
	}
	data, _ := json.MarshalIndent(h.cfg, "", "  ")
	if err := os.WriteFile(h.targets, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyNginx copies proxies/nginx as the target name into proxies, with directive (when not
// empty) first in its `location / {`.
func (h *harness) copyNginx(t *testing.T, proxies, name, directive string) {
	t.Helper()
	for _, f := range []string{"target.json", "install.sh", "nginx.conf.tmpl"} {
		copyFile(t, filepath.Join(h.root, "proxies", "nginx", f), filepath.Join(proxies, name, f))
	}
	if directive == "" {
		return
	}
	conf := filepath.Join(proxies, name, "nginx.conf.tmpl")
	data, _ := os.ReadFile(conf)
	changed := strings.Replace(string(data), "location / {", "location / {\n            "+directive, 1)
	if changed == string(data) {
		t.Fatalf("nginx.conf.tmpl has no `location / {` to put %q in", directive)
	}
	if err := os.WriteFile(conf, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(from)
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}
