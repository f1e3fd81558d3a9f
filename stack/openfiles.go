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

// WantOpenFiles is the limit RaiseOpenFiles asks for when the hard limit is lower and it may
// raise it (CAP_SYS_RESOURCE): room for the idle sweep's default 10 000 connections on every
// target with as many again for their upstream connections under load.
const WantOpenFiles = 32768

// RaiseOpenFiles raises the soft open-files limit to the hard one for this process and so for
// every process it starts from now on: the proxies, the upstream and k6 (cmd/proxybench does
// it first thing). Go raises its own soft limit at start but gives its children back the one
// it was started with, unless the program sets the limit itself, which this does. A hard limit
// under WantOpenFiles is raised to it where the process may; elsewhere it stays as it is.
func RaiseOpenFiles() error {
	of, err := OpenFilesLimit()
	if err != nil {
		return err
	}
	if of.Hard < WantOpenFiles {
		want := syscall.Rlimit{Cur: WantOpenFiles, Max: WantOpenFiles}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) == nil {
			return nil
		}
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

// MaxConnections is the client connections every target is configured to hold at once, the
// same number for all (the templates' .MaxConnections): the soft limit less the spare, what a
// process with no setting of its own (Caddy, Traefik, GoDoxy, Pingora) is held to by the
// limit itself. A busy client connection also holds an upstream one, so under load a proxy
// runs out of descriptors before that; idle connections hold only their own.
func (o OpenFiles) MaxConnections() int {
	if o.Soft <= openFilesSpare {
		return 0
	}
	return int(o.Soft - openFilesSpare)
}

// Holds says whether every target may hold connections at once (MaxConnections); an error
// says what the plan needs and how to get it, never a run that would hang or fail on a
// refused accept.
func (o OpenFiles) Holds(connections int, what string) error {
	if connections <= o.MaxConnections() {
		return nil
	}
	need := uint64(connections) + openFilesSpare
	return fmt.Errorf("%s needs %d open files per process (%d connections and %d spare), and the open-files limit is %d (soft, raised to the hard limit): "+
		"raise the hard limit (ulimit -Hn as root, LimitNOFILE= in a systemd unit, --ulimit nofile= in Docker) or plan fewer connections", what, need, connections, openFilesSpare, o.Soft)
}

// String is the limits as the report's environment says them.
func (o OpenFiles) String() string {
	return fmt.Sprintf("soft %d, hard %d (every process of the stack and k6); every target holds at most %d connections", o.Soft, o.Hard, o.MaxConnections())
}
