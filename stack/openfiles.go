package stack

import (
	"fmt"
	"syscall"
)

// OpenFiles is the open-files limit (RLIMIT_NOFILE) every process of the stack and every k6
// run inherits from proxybench (RaiseOpenFiles raised Soft to Hard when it started).
type OpenFiles struct {
	Soft, Hard uint64
}

// openFilesSpare is what a process needs beyond its connections: its listeners, logs, the
// upstream's pooled connections, k6's own files.
const openFilesSpare = 1024

// RaiseOpenFiles raises the soft open-files limit to the hard one for this process and so for
// every process it starts from now on: the proxies, the upstream and k6 (cmd/proxybench does
// it first thing). Go raises its own soft limit at start but gives its children back the one
// it was started with, unless the program sets the limit itself, which this does.
func RaiseOpenFiles() error {
	of, err := OpenFilesLimit()
	if err != nil {
		return err
	}
	lim := syscall.Rlimit{Cur: of.Hard, Max: of.Hard}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("setrlimit(RLIMIT_NOFILE) to %d: %w", lim.Max, err)
	}
	return nil
}

// OpenFilesLimit is this process's open-files limit: what it starts a process with.
func OpenFilesLimit() (OpenFiles, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return OpenFiles{}, fmt.Errorf("getrlimit(RLIMIT_NOFILE): %w", err)
	}
	return OpenFiles{Soft: lim.Cur, Hard: lim.Max}, nil
}

// Holds says whether the soft limit lets one process hold connections at once, beside its
// own files; an error says what the plan needs and how to get it, never a run that would hang
// or fail on a refused accept.
func (o OpenFiles) Holds(connections int, what string) error {
	need := uint64(connections) + openFilesSpare
	if o.Soft >= need {
		return nil
	}
	return fmt.Errorf("%s needs %d open files per process (%d connections and %d spare), and the open-files limit is %d (soft, raised to the hard limit): "+
		"raise the hard limit (ulimit -Hn as root, LimitNOFILE= in a systemd unit, --ulimit nofile= in Docker) or plan fewer connections", what, need, connections, openFilesSpare, o.Soft)
}

// String is the limits as the report's environment says them.
func (o OpenFiles) String() string {
	return fmt.Sprintf("soft %d, hard %d (every process of the stack and k6)", o.Soft, o.Hard)
}
