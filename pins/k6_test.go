package pins

import (
	"context"
	"path/filepath"
	"testing"
)

func TestK6Row(t *testing.T) {
	t.Parallel()
	goMod := "module x\n\nrequire (\n\tgo.k6.io/k6/v2 v2.1.0\n\tgo.k6.io/k6 v1.0.0\n)\n"
	// pins_go_module as proxies/pins.sh has it, without the Go module proxy
	served := `pins_go_module() { printf 'pin\t%s (Go module)\t%s\tx\t%s\n' "$1" "$2" "$2"; }`
	tests := []struct {
		name  string
		files map[string]string
		want  Row
	}{
		{"served", map[string]string{"extensions/go.mod": goMod, "proxies/pins.sh": served}, Row{Pinned: "v2.1.0", Take: "v2.1.0"}},
		{"not served", map[string]string{"extensions/go.mod": goMod, "proxies/pins.sh": `pins_go_module() { printf 'pin\ta\tb\tc\tNOTHING: gone\n'; }`}, Row{Pinned: "v2.1.0", Take: "NOTHING: gone"}},
		{"pins.sh fails", map[string]string{"extensions/go.mod": goMod, "proxies/pins.sh": `pins_go_module() { return 4; }`}, Row{Pinned: "v2.1.0", Take: "NOTHING: proxies/pins.sh pins_go_module: exit status 4"}},
		{"no row", map[string]string{"extensions/go.mod": goMod, "proxies/pins.sh": `pins_go_module() { :; }`}, Row{Pinned: "v2.1.0", Take: "NOTHING: proxies/pins.sh pins_go_module: <nil>"}},
		{"no k6 required", map[string]string{"extensions/go.mod": "module x\n\nrequire go.k6.io/k6 v1.0.0\n"}, Row{Take: "NOTHING: extensions/go.mod requires no go.k6.io/k6/v2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeFiles(t, root, tt.files)
			tt.want.What, tt.want.Now = "go.k6.io/k6/v2 (Go module, extensions/go.mod)", "immutable by version (go.sum)"
			if got := k6Row(context.Background(), root, testEnviron()); got != tt.want {
				t.Errorf("k6Row:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	t.Run("no go.mod", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		got := k6Row(context.Background(), root, testEnviron())
		if want := "NOTHING: open " + filepath.Join(root, "extensions", "go.mod") + ": no such file or directory"; got.Take != want || !got.Broken() {
			t.Errorf("k6Row takes %q, want %q", got.Take, want)
		}
	})
}
