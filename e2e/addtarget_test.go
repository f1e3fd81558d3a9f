package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
)

// TestAddTargetIsAFolder proves what the README promises: a proxy is added by a folder under
// proxies/ and its ports in targets.json, with no code change. It copies nginx's folder as a
// throwaway target with a config of its own (a marker header), brings it up through the real
// CLI and runs a scenario on it.
func TestAddTargetIsAFolder(t *testing.T) {
	const name = "nginx-alt"
	// In the location itself: nginx drops add_header inherited from an outer level as soon as
	// a level in between has one of its own (the server's Alt-Svc).
	h := variantHarness(t, 300, nginxVariant{name, [][2]string{inLocation("add_header X-Proxybench-Target {{.Name}} always;")}})
	h.up(t)

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

	out, err := h.proxybench(t, "k6", "-scenario", "reused-h1c", "-targets", name, "-testid", "e2e-add")
	if err != nil {
		t.Fatalf("reused-h1c on %s: %v\n%s", name, err, out)
	}
	r, err := result.LoadResult(filepath.Join(h.results, "e2e-add", "reused-h1c-"+name+".json"))
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

// nginxVariant is a throwaway target: proxies/nginx copied under name, its template changed
// by replacing each [old, new] pair once (a missing old fails the test).
type nginxVariant struct {
	name    string
	replace [][2]string
}

// inLocation is the replacement that puts directive first in nginx's `location / {`.
func inLocation(directive string) [2]string {
	return [2]string{"location / {", "location / {\n            " + directive}
}

// variantHarness is a harness on ports of its own (portOffset(t)+offset) whose stack is direct
// plus the nginx variants, added as folders (PROXYBENCH_PROXIES) and to the targets file.
func variantHarness(t *testing.T, offset int, variants ...nginxVariant) *harness {
	t.Helper()
	h := harnessAt(t, offset, stack.Direct)
	proxies := t.TempDir()
	copyHelpers(t, filepath.Join(h.root, "proxies"), proxies)
	var names []string
	for _, v := range variants {
		h.copyNginx(t, proxies, v)
		names = append(names, v.name)
	}
	t.Setenv("PROXYBENCH_PROXIES", proxies)
	h.addTargets(t, 50, names...)
	return h
}

// copyNginx copies proxies/nginx into proxies as the variant v.
func (h *harness) copyNginx(t *testing.T, proxies string, v nginxVariant) {
	t.Helper()
	for _, f := range []string{"target.json", "install.sh", "nginx.conf.tmpl"} {
		copyFile(t, filepath.Join(h.root, "proxies", "nginx", f), filepath.Join(proxies, v.name, f))
	}
	for _, r := range v.replace {
		replaceInFile(t, filepath.Join(proxies, v.name, "nginx.conf.tmpl"), r[0], r[1])
	}
}

// up brings the harness's stack up with the real CLI, or fails the test; it comes down when
// the test ends.
func (h *harness) up(t *testing.T) {
	t.Helper()
	out, err := h.proxybench(t, "up")
	t.Cleanup(func() {
		if out, err := h.proxybench(t, "down"); err != nil {
			t.Errorf("down: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
}

// replaceInFile replaces old by repl once in the file at path; a missing old fails the test.
func replaceInFile(t *testing.T, path, old, repl string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), old, repl, 1)
	if changed == string(data) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
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
