package sample

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TreeUsage counts a whole tree: a child's memory and open files are its parent's too.
func TestTreeUsage(t *testing.T) {
	rss, fds, err := TreeUsage(os.Getpid())
	if err != nil || rss == 0 || fds < 3 {
		t.Fatalf("this process: %d bytes, %d fds, %v; want some of each", rss, fds, err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// just exec'd, sleep may not have a resident page yet: a moment to fault its first in
	own, _, err := TreeUsage(cmd.Process.Pid)
	for deadline := time.Now().Add(2 * time.Second); err == nil && own == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		own, _, err = TreeUsage(cmd.Process.Pid)
	}
	if err != nil || own == 0 {
		t.Fatalf("sleep: %d bytes, %v", own, err)
	}
	rss2, _, err := TreeUsage(os.Getpid())
	if err != nil || rss2 < own {
		t.Errorf("this tree with sleep: %d bytes, %v; want at least sleep's %d", rss2, err, own)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, _, err := TreeUsage(cmd.Process.Pid); err == nil {
		t.Errorf("TreeUsage of an ended process: no error")
	}
}
