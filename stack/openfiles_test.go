package stack

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A child started after RaiseOpenFiles inherits the raised soft limit (Go gives its children
// back the soft limit the program started with unless the program set it), and a hard limit
// under WantOpenFiles is raised to it where the process may (root here), kept elsewhere.
func TestRaiseOpenFilesReachesChildren(t *testing.T) {
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was) })
	if err := RaiseOpenFiles(); err != nil {
		t.Fatal(err)
	}
	of, err := OpenFilesLimit()
	if err != nil {
		t.Fatal(err)
	}
	want := was.Max
	if was.Max < WantOpenFiles && canRaiseHardLimit() {
		want = WantOpenFiles
	}
	if of.Soft != of.Hard || of.Hard != want {
		t.Errorf("raised to %+v from %+v, want soft = hard = %d", of, was, want)
	}
	out, err := exec.Command("sh", "-c", "ulimit -Sn").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(string(out))
	if want := strconv.FormatUint(of.Hard, 10); got != want && got != "unlimited" {
		t.Errorf("a child's soft limit is %s, want %s", got, want)
	}
}

func TestOpenFilesHolds(t *testing.T) {
	t.Parallel()
	of := OpenFiles{Soft: 4096, Hard: 8192}
	for _, tc := range []struct {
		connections int
		ok          bool
	}{{3072, true}, {3073, false}, {10000, false}} {
		err := of.Holds(tc.connections, "IDLE_CONNECTIONS")
		if (err == nil) != tc.ok {
			t.Errorf("Holds(%d) with a soft limit of 4096: %v, want ok %v", tc.connections, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "open-files limit is 4096") || err != nil && !strings.Contains(err.Error(), fmt.Sprintf("needs %d open files", tc.connections+1024)) {
			t.Errorf("Holds(%d): %q does not say the limit", tc.connections, err)
		}
	}
	if got := (OpenFiles{Soft: 1000}).MaxConnections(); got != 0 {
		t.Errorf("MaxConnections under the spare = %d, want 0", got)
	}
	if s := of.String(); !strings.Contains(s, "soft 4096, hard 8192") || !strings.Contains(s, "at most 3072 connections") {
		t.Errorf("String() = %q", s)
	}
}

// canRaiseHardLimit says whether this process may raise its hard open-files limit: a child
// shell tries, so that the test's own limit is not changed by asking.
func canRaiseHardLimit() bool {
	return exec.Command("sh", "-c", "ulimit -Hn "+strconv.Itoa(WantOpenFiles)).Run() == nil
}
