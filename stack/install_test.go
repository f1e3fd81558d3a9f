package stack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why, label string
		failed     bool
	}{
		{"not installed: no registry serves GoDoxy", LabelNotInstalled, false},
		{"install failed: no source of haproxy 3.0.11 could be had", LabelInstallFail, true},
		{"not verified: target x did not answer a verified request", LabelNotVerified, true},
		{"not started by docker compose (optional): …", "", true},
		{"", "", false},
	} {
		if got := Label(tc.why); got != tc.label {
			t.Errorf("Label(%q) = %q, want %q", tc.why, got, tc.label)
		}
		if got := Failed(tc.why); got != tc.failed {
			t.Errorf("Failed(%q) = %v, want %v", tc.why, got, tc.failed)
		}
	}
}

func TestInstallReason(t *testing.T) {
	t.Parallel()
	exit := errors.New("exit status 1")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"the script's own words, with its attempts",
			&InstallError{Script: "proxies/haproxy/install.sh", Err: exit, Output: "make: building\ninstall: no source of haproxy 3.0.11 could be had:\n  - 3.0.11-1+deb13u3 by its pinned sha256: 404  Not Found\n  - 3.0.11-1+deb13u4 through the signed index: listed, but its files do not download\ninstall: set the version variable\n"},
			"no source of haproxy 3.0.11 could be had: 3.0.11-1+deb13u3 by its pinned sha256: 404  Not Found 3.0.11-1+deb13u4 through the signed index: listed, but its files do not download"},
		{"no words of its own: its last line",
			&InstallError{Script: "proxies/x/install.sh", Err: exit, Output: "cc: error: foo.c\nmake: *** [all] Error 1\n"},
			"proxies/x/install.sh: exit status 1: make: *** [all] Error 1"},
		{"silent", &InstallError{Script: "proxies/x/install.sh", Err: exit}, "proxies/x/install.sh: exit status 1"},
		{"not a script's failure", errors.New("target x: install script ran but\nx is not installed"), "target x: install script ran but; x is not installed"},
	} {
		if got := installReason(tc.err); got != tc.want {
			t.Errorf("%s: installReason = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Install with real scripts: with KeepGoing a target whose script fails is recorded with why
// (in the result and in the cache, for status) and the next one is installed all the same;
// without, the first failure is the error.
func TestInstallKeepGoing(t *testing.T) {
	t.Parallel()
	proxies := t.TempDir()
	def := func(name, script string, optional bool) *Definition {
		dir := filepath.Join(proxies, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "install.sh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return &Definition{Name: name, Dir: dir, Command: []string{"proxybench-test-" + name}, Install: "install.sh", Optional: optional}
	}
	works := `mkdir -p "$PROXYBENCH_CACHE/bin" && printf '#!/bin/sh\n' >"$PROXYBENCH_CACHE/bin/proxybench-test-b" && chmod +x "$PROXYBENCH_CACHE/bin/proxybench-test-b"`
	defs := map[string]*Definition{
		"a": def("a", "echo 'install: the pin is gone' >&2; exit 1", false),
		"b": def("b", works, false),
		"c": def("c", "exit 3", true), // optional, given nothing: not installed
		"d": def("d", "echo 'install: the download has another sha256' >&2; exit 1", true),
	}

	s := &Stack{Paths: Paths{CacheDir: t.TempDir()}, KeepGoing: true}
	got, err := s.Install(context.Background(), defs)
	if err != nil {
		t.Fatalf("KeepGoing: %v", err)
	}
	if got["a"] != "install failed: the pin is gone" || !strings.HasPrefix(got["c"], "not installed: ") || got["b"] != "" ||
		got["d"] != "install failed: the download has another sha256" || len(got) != 3 {
		t.Errorf("unavailable = %q", got)
	}
	if _, err := defs["b"].Binary(s.CacheBin()); err != nil {
		t.Errorf("b after a failed: %v", err)
	}
	if why := s.installFailure("a"); why != "the pin is gone" {
		t.Errorf("installFailure(a) = %q, want the script's reason kept for status", why)
	}

	s = &Stack{Paths: Paths{CacheDir: t.TempDir()}}
	if _, err := s.Install(context.Background(), defs); err == nil || !strings.Contains(err.Error(), "target a: install script proxies/a/install.sh failed") {
		t.Errorf("without KeepGoing: error %v, want a's failure", err)
	}
}

// A variable that chooses what to install (GODOXY_BIN) runs the script again though the target is
// installed: a new binary given replaces the old one instead of being ignored.
func TestInstallEnvRunsTheScriptAgain(t *testing.T) {
	dir := t.TempDir()
	script := `mkdir -p "$PROXYBENCH_CACHE/bin" && printf '#!/bin/sh\n' >"$PROXYBENCH_CACHE/bin/proxybench-test-e" && chmod +x "$PROXYBENCH_CACHE/bin/proxybench-test-e" && echo run >>"$PROXYBENCH_CACHE/runs"`
	if err := os.WriteFile(filepath.Join(dir, "install.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &Definition{Name: "e", Dir: dir, Command: []string{"proxybench-test-e"}, Install: "install.sh", InstallEnv: []string{"PROXYBENCH_TEST_E_BIN"}}
	s := &Stack{Paths: Paths{CacheDir: t.TempDir()}}
	runs := func() int {
		data, _ := os.ReadFile(filepath.Join(s.CacheDir, "runs"))
		return strings.Count(string(data), "run")
	}
	for i, tc := range []struct {
		env  string
		want int // script runs so far
	}{
		{"", 1},  // not installed: runs
		{"", 1},  // installed, nothing asked: does not run
		{"x", 2}, // installed, a binary given: runs again
	} {
		t.Setenv("PROXYBENCH_TEST_E_BIN", tc.env)
		if _, err := s.Install(context.Background(), map[string]*Definition{"e": d}); err != nil {
			t.Fatal(err)
		}
		if got := runs(); got != tc.want {
			t.Errorf("install %d (PROXYBENCH_TEST_E_BIN=%q): the script ran %d times in all, want %d", i+1, tc.env, got, tc.want)
		}
	}
}

func TestStateFailures(t *testing.T) {
	t.Parallel()
	st := &State{Missing: map[string]string{
		"godoxy":  "not installed: give GODOXY_BIN",
		"nginx":   "not verified: short body",
		"haproxy": "install failed: no source",
	}}
	got := strings.Join(st.Failures(), "; ")
	if want := "haproxy (install failed: no source); nginx (not verified: short body)"; got != want {
		t.Errorf("Failures = %q, want %q", got, want)
	}
}
