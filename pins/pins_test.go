package pins

import (
	"os"
	"path/filepath"
	"testing"
)

// testEnviron is what the scripts of a test run in: a PATH to find bash and coreutils, nothing
// else of the user's.
func testEnviron() []string { return []string{"PATH=" + os.Getenv("PATH")} }

// writeFiles writes files (path relative to dir: content) under dir, scripts included.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
