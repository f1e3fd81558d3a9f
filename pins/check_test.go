package pins

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Check prints every row it got, the failed scripts' too, and fails naming each script that
// failed and each pin that rotted.
func TestCheck(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"extensions/go.mod":         "module x\n\nrequire (\n\tgo.k6.io/k6/v2 v2.1.0\n)\n",
		"proxies/pins.sh":           `pins_go_module() { printf 'pin\t%s (Go module)\t%s\tx\t%s\n' "$1" "$2" "$2"; }`,
		"proxies/good/install.sh":   `printf 'pin\tgood\t1\tindex: 2\t1 (pinned)\n'`,
		"proxies/rotted/install.sh": `printf 'pin\trotted\t1\tindex: none\tNOTHING: 404\n'`,
		"proxies/failed/install.sh": `printf 'pin\thalf\t1\tindex: 1\t1 (pinned)\n'; echo "registry down" >&2; exit 1`,
	})
	var scripts []string
	for _, s := range []string{"good", "rotted", "failed"} {
		scripts = append(scripts, filepath.Join(root, "proxies", s, "install.sh"))
	}
	var out bytes.Buffer
	err := Check(context.Background(), Job{Root: root, Scripts: scripts, Cache: t.TempDir(), Environ: testEnviron(), Out: &out})
	for _, want := range []string{"AN INSTALL TODAY TAKES", "good", "rotted", "half", "go.k6.io/k6/v2 (Go module, extensions/go.mod)  v2.1.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, out.String())
		}
	}
	if err == nil {
		t.Fatal("want an error")
	}
	want := filepath.Join("proxies", "failed", "install.sh") + ": exit status 1: registry down\n" +
		"rotted: an install would take nothing: NOTHING: 404"
	if err.Error() != want {
		t.Errorf("error:\n%v\nwant\n%s", err, want)
	}
}
