package stack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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
		{
			"the script's own words, with its attempts",
			&InstallError{Script: "proxies/haproxy/install.sh", Err: exit, Output: "make: building\ninstall: no source of haproxy 3.0.11 could be had:\n  - 3.0.11-1+deb13u3 by its pinned sha256: 404  Not Found\n  - 3.0.11-1+deb13u4 through the signed index: listed, but its files do not download\ninstall: set the version variable\n"},
			"no source of haproxy 3.0.11 could be had: 3.0.11-1+deb13u3 by its pinned sha256: 404  Not Found 3.0.11-1+deb13u4 through the signed index: listed, but its files do not download",
		},
		{
			"no words of its own: its last line",
			&InstallError{Script: "proxies/x/install.sh", Err: exit, Output: "cc: error: foo.c\nmake: *** [all] Error 1\n"},
			"proxies/x/install.sh: exit status 1: make: *** [all] Error 1",
		},
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

// An install interrupted (Ctrl-C, SIGTERM: the context) ends at once with everything it
// started, a build step that ignores SIGTERM included, and is not recorded as a failure.
func TestInstallInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := strconv.Itoa(40000 + os.Getpid()%20000) // a sleep of this test's own
	script := `(trap '' TERM; sleep ` + marker + `.5) & sleep ` + marker + `; echo done`
	if err := os.WriteFile(filepath.Join(dir, "install.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &Definition{Name: "i", Dir: dir, Command: []string{"proxybench-test-i"}, Install: "install.sh"}
	s := &Stack{Paths: Paths{CacheDir: t.TempDir()}, KeepGoing: true}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(sleepsOf(marker)) < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	t0 := time.Now()
	_, err := s.Install(ctx, map[string]*Definition{"i": d})
	if took := time.Since(t0); err == nil || !strings.Contains(err.Error(), "target i: install (proxies/i/install.sh) interrupted: every process it started is stopped") || took > installGrace+3*time.Second {
		t.Fatalf("interrupted install: error %v after %v; want \"interrupted\" within %v", err, took, installGrace+3*time.Second)
	}
	if left := sleepsOf(marker); len(left) > 0 {
		t.Errorf("the install's processes %v still run after it returned", left)
	}
	if why := s.installFailure("i"); why != "" {
		t.Errorf("an interrupted install is recorded as failed: %q", why)
	}
}

// sleepsOf is the pids of live `sleep MARKER…` processes.
func sleepsOf(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		argv, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if !strings.HasPrefix(string(argv), "sleep\x00"+marker) {
			continue
		}
		if _, state, err := procStat(pid); err == nil && state != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
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
