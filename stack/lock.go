package stack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockName is the file, in the run directory, that `up` and `bench` hold while they run: one
// stack per run directory (PROXYBENCH_RUN gives a second user a directory of their own).
const lockName = "controller.lock"

// Lock takes the run directory for one controller command (what: "up", "bench") until unlock is
// called or the process ends, however it ends: the kernel drops the lock of a killed process.
// A second command meanwhile gets an error naming the holder, instead of starting twins of a
// stack in use or taking one away from a bench in the middle of its runs.
func (s *Stack) Lock(what string) (unlock func(), err error) {
	if err := os.MkdirAll(s.RunDir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(s.RunDir, lockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use by %s: wait for it to end, or stop it (kill -INT its pid; `make down` would take its stack away mid-run), or use another PROXYBENCH_RUN directory and other ports", s.RunDir, lockHolder(string(holder)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// who holds it, for the message above (the lock itself is the flock, not this text)
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("%s %d %s\n", what, os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0)
	return func() { f.Close() }, nil
}

// lockHolder describes the lock file's "what pid started" line.
func lockHolder(line string) string {
	f := strings.Fields(line)
	if len(f) < 3 {
		return "another proxybench command"
	}
	if _, err := strconv.Atoi(f[1]); err != nil {
		return "another proxybench command"
	}
	return fmt.Sprintf("`proxybench %s` (pid %s, started %s)", f[0], f[1], f[2])
}
