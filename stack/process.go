package stack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one started program, identified by pid and by its start time so that a pid the
// kernel has since given to someone else is never signalled.
type Process struct {
	PID       int      `json:"pid"`
	StartTick uint64   `json:"start_tick"`
	Argv      []string `json:"argv"`
	Log       string   `json:"log"`

	exited chan struct{}
}

// StartProcess starts argv in its own process group with output appended to logPath. The
// program keeps running after we exit; while we run, Exited reports an early death.
func StartProcess(argv, env []string, dir, logPath string) (*Process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Its own group: one signal reaches the master and its workers, and a Ctrl-C meant for
	// make does not tear the stack down halfway.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &Process{PID: cmd.Process.Pid, Argv: argv, Log: logPath, exited: make(chan struct{})}
	p.StartTick, _ = startTick(p.PID)
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed when a process started by this program ends.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Alive reports whether the process is still the one we started and has not exited.
func (p *Process) Alive() bool {
	tick, state, err := procStat(p.PID)
	if err != nil || state == "Z" || state == "X" {
		return false
	}
	return p.StartTick == 0 || tick == p.StartTick
}

// Stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs what is left.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Alive() {
		return nil
	}
	if err := syscall.Kill(-p.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop pid %d: %w", p.PID, err)
	}
	// a stopped process (SIGSTOP, a debugger gone) acts on SIGTERM only once continued
	_ = syscall.Kill(-p.PID, syscall.SIGCONT)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !p.Alive() && !groupAlive(p.PID) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	for i := 0; i < 40 && (p.Alive() || groupAlive(p.PID)); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if p.Alive() {
		return fmt.Errorf("pid %d did not stop after SIGKILL", p.PID)
	}
	return nil
}

// Stopped reports whether a process of the group is stopped by a signal (SIGSTOP, SIGTSTP:
// state T) or in a tracing stop (t): it is there, and answers nothing.
func (p *Process) Stopped() bool {
	for _, st := range groupStates(p.PID) {
		if st == "T" || st == "t" {
			return true
		}
	}
	return false
}

// groupAlive reports whether any live process is still in process group pgid.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false
	}
	// Kill(…, 0) also succeeds for zombies waiting to be reaped; look for a live member.
	for _, st := range groupStates(pgid) {
		if st != "Z" && st != "X" {
			return true
		}
	}
	return false
}

// groupStates is the state (/proc/<pid>/stat field 3) of each process in process group pgid,
// this one left out.
func groupStates(pgid int) []string {
	var states []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if f := statFields(string(data)); len(f) > 5 && f[4] == strconv.Itoa(pgid) {
			states = append(states, f[2])
		}
	}
	return states
}

func startTick(pid int) (uint64, error) {
	t, _, err := procStat(pid)
	return t, err
}

// procStat reads a process's start time (field 22) and state (field 3) from /proc.
func procStat(pid int) (uint64, string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", err
	}
	f := statFields(string(data))
	if len(f) < 22 {
		return 0, "", fmt.Errorf("/proc/%d/stat: short", pid)
	}
	tick, err := strconv.ParseUint(f[21], 10, 64)
	return tick, f[2], err
}

// statFields splits /proc/<pid>/stat, whose second field (the command) may hold spaces.
func statFields(s string) []string {
	lp, rp := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if lp < 0 || rp < lp {
		return nil
	}
	rest := strings.Fields(s[rp+1:])
	return append([]string{s[:lp-1], s[lp+1 : rp]}, rest...)
}

// Tail returns the last n lines of a log file, for error messages.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return LastLines(string(data), n)
}
