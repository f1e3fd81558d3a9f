package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// .env fills in what the environment lacks and never overrides it; a line that is no setting
// stops the command, naming the file and line.
func TestLoadDotEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	if err := os.WriteFile(path, []byte("# mine\nDURATION=42s\nPROFILE=stress\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PROFILE", "stable")
	t.Setenv("DURATION", "")
	os.Unsetenv("DURATION") // t.Setenv restores it after the test
	if err := loadDotEnv(path); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("DURATION"); got != "42s" {
		t.Errorf("DURATION=%q, want .env's 42s", got)
	}
	if got := os.Getenv("PROFILE"); got != "stable" {
		t.Errorf("PROFILE=%q, want the environment's stable over .env's", got)
	}
	f, err := parseBenchFlags([]string{"-profile", "smoke"})
	if err != nil || f.profile != "smoke" {
		t.Errorf("profile %v (%v), want the flag's smoke over the environment's", f, err)
	}
	if err := loadDotEnv(filepath.Join(dir, "none")); err != nil {
		t.Errorf("no .env: %v, want nothing to do", err)
	}
	if err := os.WriteFile(path, []byte("DURATION=1s\nnot a setting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := loadDotEnv(path); err == nil || !strings.Contains(err.Error(), ".env:2:") {
		t.Errorf("a bad line: %v, want an error naming .env:2", err)
	}
}
