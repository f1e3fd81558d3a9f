package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The k6 xk6 builds (make k6-build with xk6) is the k6 go build makes without it: the same k6
// version, the same extensions under the same names, and offline by default although xk6's
// main.go sets nothing (extensions/offline.go does, for both).
func TestXk6BuildsTheSameK6(t *testing.T) {
	xk6 := os.Getenv("XK6_BIN")
	if xk6 == "" {
		xk6, _ = exec.LookPath("xk6")
	}
	if xk6 == "" {
		t.Skip("no xk6: XK6_BIN=<path> or xk6 on PATH (make test passes the one make k6-build uses)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	built := map[string]string{}
	for _, way := range []struct{ name, xk6 string }{{"go build", ""}, {"xk6", xk6}} {
		out := filepath.Join(dir, strings.ReplaceAll(way.name, " ", "-"), "k6")
		cmd := exec.Command(filepath.Join(root, "extensions", "build-k6.sh"), out)
		cmd.Env = append(os.Environ(), "XK6_BIN="+way.xk6)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("extensions/build-k6.sh with %s: %v\n%s", way.name, err, b)
		}
		built[way.name] = out
	}
	goVersion, goExts := k6Version(t, built["go build"])
	xk6Version, xk6Exts := k6Version(t, built["xk6"])
	if goVersion != xk6Version {
		t.Errorf("k6 version: go build %q, xk6 %q", goVersion, xk6Version)
	}
	if len(goExts) == 0 || !slices.Equal(goExts, xk6Exts) {
		t.Errorf("extensions differ:\ngo build %q\nxk6      %q", goExts, xk6Exts)
	}
	for name, k6 := range built {
		out, _ := exec.Command(k6, "version").CombinedOutput()
		if got := parseK6Version(t, string(out)).builtWithXk6(); got != (name == "xk6") {
			t.Errorf("%s: k6 version's module column says built with xk6 %v\n%s", name, got, out)
		}
	}
	t.Run("xk6 build offline by default", func(t *testing.T) { assertOffline(t, built["xk6"]) })
}

// k6Version runs `k6 version` and returns k6's version and the extensions it lists.
func k6Version(t *testing.T, k6 string) (string, []string) {
	t.Helper()
	out, err := exec.Command(k6, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", k6, err, out)
	}
	v := parseK6Version(t, string(out))
	return v.version, v.extensions
}

// k6VersionOutput is what `k6 version` says: k6's version, the extensions it lists, each as
// "name [kind]" sorted (what a script and --out see), and the module column of each, which
// differs by build: the extensions' own packages for go build of cmd/k6 (their module is the
// main module), the extensions module as a dependency for xk6.
type k6VersionOutput struct {
	version    string
	extensions []string
	modules    []string
}

// builtWithXk6 tells an xk6 build from go build's by that module column.
func (v k6VersionOutput) builtWithXk6() bool {
	for _, m := range v.modules {
		if m != "github.com/proxybench/proxybench/extensions" {
			return false
		}
	}
	return len(v.modules) > 0
}

func parseK6Version(t *testing.T, out string) k6VersionOutput {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	fields := strings.Fields(lines[0]) // "k6 v2.2.0 (go1.26.8, linux/amd64)"
	if len(fields) < 2 {
		t.Fatalf("k6 version: no version in %q", lines[0])
	}
	v := k6VersionOutput{version: fields[1]}
	for _, l := range lines[1:] {
		i := strings.LastIndex(l, ", ")
		if i < 0 || !strings.HasPrefix(l, "  ") {
			continue
		}
		v.extensions = append(v.extensions, l[i+2:])
		v.modules = append(v.modules, strings.Fields(l[:i])[0])
	}
	slices.Sort(v.extensions)
	return v
}
