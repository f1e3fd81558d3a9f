package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Why a target is not up, as every table, state and manifest says it: the label, then ": " and
// the reason.
const (
	LabelNotInstalled = "not installed"  // optional, and no registry serves it (GoDoxy)
	LabelInstallFail  = "install failed" // its install script failed
	LabelNotVerified  = "not verified"   // installed, but it did not start or answer as claimed
)

// Label is the label of a reason a target is not up ("install failed: …" → "install failed"),
// or "" when the reason has none.
func Label(why string) string {
	for _, l := range []string{LabelNotInstalled, LabelInstallFail, LabelNotVerified} {
		if strings.HasPrefix(why, l+":") {
			return l
		}
	}
	return ""
}

// Failed tells whether a target is not up because something failed, rather than because it is
// an optional target nobody installed: a run with such a target is not a clean run.
func Failed(why string) bool { return why != "" && Label(why) != LabelNotInstalled }

// Install runs the install script of every proxy whose binary is missing, or whose InstallEnv
// asks for a new one. Scripts are
// idempotent and pinned; they put binaries in the cache or install Debian packages. A target that
// cannot be installed is returned in unavailable with why, and the others are installed all the
// same: "not installed: …" (an optional target no registry serves, with how to add it) or, with
// KeepGoing, "install failed: …". Without KeepGoing (targets the user named) a failure of a
// target that is not optional is an error at once.
func (s *Stack) Install(ctx context.Context, defs map[string]*Definition) (unavailable map[string]string, err error) {
	unavailable = map[string]string{}
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := defs[n]
		if _, err := d.Binary(s.CacheBin()); err == nil && d.installAsked() == "" {
			continue
		}
		// Two stacks (a user's and the test's) may install the same proxy at once; one waits.
		unlock, err := s.lockInstall(n)
		if err != nil {
			return nil, err
		}
		why, err := s.install(ctx, d)
		unlock()
		switch {
		case err != nil && (!s.KeepGoing || ctx.Err() != nil):
			return nil, err
		case err != nil:
			why = LabelInstallFail + ": " + installReason(err)
			s.logf("%-8s %s (the other targets go on)", n, why)
		}
		if why != "" {
			unavailable[n] = why
		}
	}
	return unavailable, nil
}

// lockInstall takes an exclusive lock on one target's installation in the cache.
func (s *Stack) lockInstall(name string) (unlock func(), err error) {
	if err := os.MkdirAll(s.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("target %s: install: %w", name, err)
	}
	f, err := os.OpenFile(filepath.Join(s.CacheDir, ".install-"+name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("target %s: install: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("target %s: install lock: %w", name, err)
	}
	return func() { f.Close() }, nil
}

// install runs one target's install script, unless another process installed it meanwhile. An
// optional target whose script fails is not an error: why says how to add it. A failure is kept
// in the cache beside what the script records of a success (installed/NAME), for `make status`.
func (s *Stack) install(ctx context.Context, d *Definition) (why string, err error) {
	n := d.Name
	asked := d.installAsked()
	if _, err := d.Binary(s.CacheBin()); err == nil && asked == "" {
		return "", nil
	}
	if d.Install == "" {
		return "", fmt.Errorf("target %s: %s is not installed and proxies/%s/target.json names no install script", n, d.Command[0], n)
	}
	if asked != "" {
		asked = ", " + asked
	}
	s.logf("%-8s installing (proxies/%s/%s%s)", n, n, d.Install, asked)
	t0 := time.Now()
	var tail bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", d.Install)
	cmd.Dir = d.Dir
	cmd.Env = append(os.Environ(), "PROXYBENCH_CACHE="+s.CacheDir)
	w := io.Writer(&tail)
	if s.Out != nil {
		w = io.MultiWriter(&tail, s.Out)
	}
	cmd.Stdout, cmd.Stderr = w, w
	// The script's builds (go, cargo, make, curl) run in a group of their own, so that Ctrl-C
	// or SIGTERM ends them all, not only the bash above them, and Run does not wait on an
	// orphan holding its output pipe.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = installGrace
	failed := s.installedPath(n) + ".failed"
	err = cmd.Run()
	if cmd.Process != nil {
		// what ignored SIGTERM, or outlived the script; gone before we go on
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for i := 0; i < 40 && groupAlive(cmd.Process.Pid); i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if ctx.Err() != nil {
		// not a failure of the script: nothing is recorded against it, and the next run installs
		return "", fmt.Errorf("target %s: install (proxies/%s/%s) interrupted: every process it started is stopped, and it starts again from the beginning next time (%w)",
			n, n, d.Install, ctx.Err())
	}
	if err != nil {
		var exit *exec.ExitError
		if d.Optional && errors.As(err, &exit) && exit.ExitCode() == ExitNotGiven {
			s.logf("%-8s skipped (optional): %s", n, d.NotInstalled())
			return d.NotInstalled(), nil
		}
		err = &InstallError{Target: n, Script: fmt.Sprintf("proxies/%s/%s", n, d.Install), Err: err, Output: LastLines(tail.String(), 20)}
		if werr := os.MkdirAll(filepath.Dir(failed), 0o755); werr == nil {
			_ = os.WriteFile(failed, []byte(installReason(err)+"\n"), 0o644)
		}
		return "", err
	}
	_ = os.Remove(failed)
	if _, err := d.Binary(s.CacheBin()); err != nil {
		return "", fmt.Errorf("target %s: install script ran but %w", n, err)
	}
	s.logf("%-8s installed in %v", n, time.Since(t0).Round(time.Second))
	return "", nil
}

// installGrace is how long an interrupted install script's group has to end on SIGTERM before
// it is killed.
const installGrace = 5 * time.Second

// ExitNotGiven is the exit status of an optional target's install script that was given nothing
// to install (GoDoxy with neither GODOXY_BIN nor GODOXY_RELEASE): the target is "not
// installed", said with how to add it. Any other failure, such as a download refused for its
// sha256, is an install failure like any target's.
const ExitNotGiven = 3

// InstallError is an install script's failure, with the last lines it printed.
type InstallError struct {
	Target, Script string
	Err            error
	Output         string
}

func (e *InstallError) Error() string {
	return fmt.Sprintf("target %s: install script %s failed: %v\n%s", e.Target, e.Script, e.Err, e.Output)
}

func (e *InstallError) Unwrap() error { return e.Err }

// installReason is an install failure in one line: what the script said of it (its first line
// starting "install:", with the attempts listed below it), else its last line.
func installReason(err error) string {
	var ie *InstallError
	if !errors.As(err, &ie) {
		return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
	}
	lines := strings.Split(strings.TrimRight(ie.Output, "\n"), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "install:") {
			continue
		}
		parts := []string{strings.TrimSpace(strings.TrimPrefix(l, "install:"))}
		for _, more := range lines[i+1:] {
			if !strings.HasPrefix(more, "  - ") {
				break
			}
			parts = append(parts, strings.TrimPrefix(more, "  - "))
		}
		return strings.Join(parts, " ")
	}
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return fmt.Sprintf("%s: %v: %s", ie.Script, ie.Err, last)
	}
	return fmt.Sprintf("%s: %v", ie.Script, ie.Err)
}

// installedPath is where install scripts record what a target was installed from (one line,
// proxies/pins.sh), and Install why its last install failed (the same path + ".failed").
func (s *Stack) installedPath(name string) string {
	return filepath.Join(s.CacheDir, "installed", name)
}

// Installed is what the target was installed from, as its install script recorded it ("nginx
// 1.26.3-3+deb13u7 from Debian's source package (pinned, …)"), or "" when it recorded nothing.
func (s *Stack) Installed(name string) string {
	data, err := os.ReadFile(s.installedPath(name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// installFailure is why the target's last install failed, or "".
func (s *Stack) installFailure(name string) string {
	data, err := os.ReadFile(s.installedPath(name) + ".failed")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// NotInstalled says that the target is not installed and how to add it.
func (d *Definition) NotInstalled() string {
	if d.IfMissing != "" {
		return "not installed: " + d.IfMissing
	}
	return fmt.Sprintf("not installed: `make setup` runs proxies/%s/%s", d.Name, d.Install)
}

var versionRE = regexp.MustCompile(`v?\d+\.\d+(\.\d+)?`)

// Version asks the proxy for its version; it never fails, it says "unknown" instead.
func (s *Stack) Version(d *Definition, v Vars) string {
	argv, err := expand(d.Name, d.Version, v)
	if err != nil {
		return "unknown"
	}
	bin, err := LookBinary(argv[0], s.CacheBin())
	if err != nil {
		return "not installed"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bin, argv[1:]...).CombinedOutput()
	if m := versionRE.Find(out); m != nil {
		return strings.TrimPrefix(string(m), "v")
	}
	return "unknown"
}

// upstreamVersion names the Go that built the upstream, the only version it has.
func upstreamVersion(bin string) string {
	info, err := buildInfo(bin)
	if err != nil {
		return "upstream"
	}
	return "upstream " + info
}

func buildInfo(bin string) (string, error) {
	out, err := exec.Command("go", "version", bin).Output()
	if err != nil {
		return "", err
	}
	// "bin/upstream: go1.26.8"
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return "", fmt.Errorf("go version %s: %q", bin, out)
	}
	return f[len(f)-1], nil
}

// LastLines are the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
