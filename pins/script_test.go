package pins

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every other script `make pins` runs is in the repository.
func TestOthersExist(t *testing.T) {
	t.Parallel()
	for _, s := range Others("..") {
		if _, err := os.Stat(s); err != nil {
			t.Errorf("Others: %v", err)
		}
	}
}

func TestOfScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// each script says where it runs and what it is given, in its rows
	writeFiles(t, dir, map[string]string{
		"ok/install.sh":     `printf 'noise\npin\t%s\t%s\t%s\t1.0\n' "$(basename "$PWD")" "$PROXYBENCH_PINS" "$PROXYBENCH_CACHE"`,
		"quiet/install.sh":  `echo "nothing to pin"`,
		"failed/install.sh": `printf 'pin\ta\t1\tnone\tNOTHING: 404\n'; for i in 1 2 3 4 5 6; do echo "line $i" >&2; done; exit 3`,
	})
	tests := []struct {
		script string
		rows   []Row
		want   string // "" is no error
	}{
		{"ok", []Row{{"ok", "1", "/cache", "1.0"}}, ""},
		{"quiet", nil, "printed no pin rows"},
		{"failed", []Row{{"a", "1", "none", "NOTHING: 404"}}, "exit status 3: line 2\nline 3\nline 4\nline 5\nline 6"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			t.Parallel()
			rows, err := ofScript(context.Background(), filepath.Join(dir, tt.script, "install.sh"), "/cache", testEnviron())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("want rows, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("want an error with %q, got %v", tt.want, err)
			}
			if len(rows) != len(tt.rows) || (len(rows) > 0 && rows[0] != tt.rows[0]) {
				t.Errorf("rows %+v, want %+v", rows, tt.rows)
			}
		})
	}
}
