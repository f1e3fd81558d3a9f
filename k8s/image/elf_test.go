package image

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestELFDepsDynamic(t *testing.T) {
	if _, err := os.Stat("/bin/ls"); err != nil {
		t.Skip("no /bin/ls:", err)
	}
	deps, err := ELFDeps("/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(deps) || len(slices.Compact(slices.Clone(deps))) != len(deps) {
		t.Errorf("ELFDeps(/bin/ls) = %v, not sorted and deduplicated", deps)
	}
	for _, want := range []string{"/lib64/ld-linux-x86-64.so.2", "/libc.so.6"} {
		if !slices.ContainsFunc(deps, func(d string) bool { return strings.HasSuffix(d, want) }) {
			t.Errorf("ELFDeps(/bin/ls) = %v, want one ending in %s", deps, want)
		}
	}
	for _, d := range deps {
		if info, err := os.Stat(d); err != nil || !info.Mode().IsRegular() {
			t.Errorf("dependency %s is not a file: %v", d, err)
		}
	}
}

func TestELFDepsStatic(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a static binary:", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gobin, "build", "-o", "static", "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	deps, err := ELFDeps(filepath.Join(dir, "static"))
	if err != nil || len(deps) != 0 {
		t.Errorf("ELFDeps(static) = %v, %v; want none", deps, err)
	}
}

func TestELFDepsRefusesNonELF(t *testing.T) {
	p := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ELFDeps(p); err == nil || !strings.HasPrefix(err.Error(), "image.ELFDeps") {
		t.Errorf("ELFDeps(script) = %v, want an error of image.ELFDeps", err)
	}
}
