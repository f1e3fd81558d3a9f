package extensions

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"go.k6.io/k6/v2/ext"
)

// Importing this package must register every module scripts import.
func TestRegistered(t *testing.T) {
	t.Parallel()
	mods := ext.Get(ext.JSExtension)
	for _, name := range []string{"k6/x/proxybench/http3", "k6/x/proxybench/sse", "k6/x/proxybench/load", "k6/x/proxybench/ws"} {
		if _, ok := mods[name]; !ok {
			t.Errorf("%s is not registered", name)
		}
	}
}

// The shared packages the root module uses (the upstream's handlers, the CA of the tests and
// the stack) are no part of k6: a k6 built from this module must not link them.
func TestSharedCodeNotInK6(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH to list the k6 build's packages with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, shared := range []string{"upstream", "localca"} {
		if pkg := "github.com/proxybench/proxybench/extensions/" + shared; slices.Contains(deps, pkg) {
			t.Errorf("%s is linked into k6: an extension imports it", pkg)
		}
	}
}
