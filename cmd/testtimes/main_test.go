package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFromJSON feeds the events of a real `go test -json` run (a package of this test's making,
// with a passing, a failing and a long test) and checks what is printed and recorded.
func TestFromJSON(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module github.com/proxybench/proxybench/demo\n\ngo 1.24\n",
		"demo_test.go": `package demo

import (
	"testing"
	"time"
)

func TestQuiet(t *testing.T) { t.Log("not shown: it passed") }
func TestLoud(t *testing.T)  { t.Error("shown: it failed") }
func TestLong(t *testing.T)  { time.Sleep(300 * time.Millisecond) }
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	// a package with no test files: no row
	if err := os.WriteFile(filepath.Join(dir, "empty", "empty.go"), []byte("package empty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = dir
	events, _ := cmd.Output() // fails: TestLoud
	times := filepath.Join(dir, "times.tsv")
	var out strings.Builder
	err := fromJSON(times, " (demo)", 200*time.Millisecond, strings.NewReader(string(events)), &out)
	if err == nil {
		t.Error("a failed test: want an error")
	}
	for _, want := range []string{"shown: it failed", "--- FAIL: TestLoud", "FAIL\tgithub.com/proxybench/proxybench/demo"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed %q, want %q in it", out.String(), want)
		}
	}
	if strings.Contains(out.String(), "not shown") || strings.Contains(out.String(), "=== RUN") {
		t.Errorf("printed a passed test's output or -v's lines: %q", out.String())
	}
	data, err := os.ReadFile(times)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "go test demo TestLong (demo)\t") || !strings.HasSuffix(rows[0], "\tok") ||
		!strings.HasPrefix(rows[1], "go test demo (demo)\t") || !strings.HasSuffix(rows[1], "\tFAIL") {
		t.Errorf("recorded %q, want TestLong's row (ok) and the package's (FAIL)", rows)
	}
}

func TestTable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "times.tsv")
	if err := os.WriteFile(file, []byte("make setup\t61.4\tok\nmake test\t3700\tFAIL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := table(file, &out); err != nil {
		t.Fatal(err)
	}
	want := "\npart            took\nmake setup      1:01\nmake test    1:01:40  FAIL\n"
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}
