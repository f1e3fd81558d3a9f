package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain makes the test binary podpause when PODPAUSE_TEST is set, after it forked a child
// that exits at once and printed the child's pid: the zombie podpause must reap.
func TestMain(m *testing.M) {
	if os.Getenv("PODPAUSE_TEST") == "" {
		os.Exit(m.Run())
	}
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println(pid)
	os.Exit(pause(os.Stderr))
}

func TestPause(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "PODPAUSE_TEST=1")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// only for a failure before Wait, so that podpause does not outlive the test; after
			// Wait, Kill fails with os.ErrProcessDone, which is no failure
			defer func() { _ = cmd.Process.Kill() }()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			child, convErr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || convErr != nil {
				t.Fatalf("podpause printed %q: %v %v", line, err, convErr)
			}
			// reaped, the child is gone; a zombie would stay. Reaping also tells that podpause
			// now handles the signals: it reaps only once it has asked for them.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d", child)); errors.Is(err, os.ErrNotExist) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("child %d not reaped in 10 s", child)
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("podpause after %v: %v, want exit 0", sig, err)
			}
		})
	}
}
