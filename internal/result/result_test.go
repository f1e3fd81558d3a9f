package result

import (
	"os"
	"path/filepath"
	"testing"
)

// A result file that cannot be read says which file and, for bad JSON, where in it.
func TestLoadResultSaysWhere(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string // want follows "<path>"
	}{
		{"truncated", "{\"schema\": 1,\n \"scenario\": \"reused-h1\", \"rps\": 12", ":2:35: unexpected end of JSON input (the file is truncated or a bracket is missing)"},
		{"empty", "", ":1:1: unexpected end of JSON input (the file is truncated or a bracket is missing)"},
		{"wrong type", "{\"schema\": 1, \"rps\": \"fast\"}", `:1:27: "rps" is a JSON string, want a number`},
		{"other schema", `{"schema": 2}`, ": result schema 2, this proxybench reads schema 1: written by another version of proxybench"},
		{"no schema", `{"scenario": "ws"}`, ": no result schema (want 1): not a result file of proxybench"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "r.json")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadResult(p); err == nil || err.Error() != p+tc.want {
				t.Errorf("LoadResult error = %v, want %s%s", err, p, tc.want)
			}
		})
	}
}
