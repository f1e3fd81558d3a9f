package stack

import (
	"bytes"
	"context"
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

// Install runs the install script of every proxy whose binary is missing. Scripts are
// idempotent and pinned; they put binaries in the cache or install Debian packages. An optional
// target whose script fails (GoDoxy: no registry serves it) is returned in missing, with the
// script's last line saying how to add it; any other failure is an error.
func (s *Stack) Install(ctx context.Context, defs map[string]*Definition) (missing map[string]string, err error) {
	missing = map[string]string{}
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := defs[n]
		if _, err := d.Binary(s.CacheBin()); err == nil {
			continue
		}
		// Two stacks (a user's and the test's) may install the same proxy at once; one waits.
		unlock, err := s.lockInstall(n)
		if err != nil {
			return nil, err
		}
		err = s.install(ctx, d, missing)
		unlock()
		if err != nil {
			return nil, err
		}
	}
	return missing, nil
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

// install runs one target's install script, unless another process installed it meanwhile.
func (s *Stack) install(ctx context.Context, d *Definition, missing map[string]string) error {
	n := d.Name
	if _, err := d.Binary(s.CacheBin()); err == nil {
		return nil
	}
	if d.Install == "" {
		return fmt.Errorf("target %s: %s is not installed and proxies/%s/target.json names no install script", n, d.Command[0], n)
	}
	s.logf("%-8s installing (proxies/%s/%s)", n, n, d.Install)
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
	if err := cmd.Run(); err != nil {
		if d.Optional {
			missing[n] = d.NotInstalled()
			s.logf("%-8s skipped (optional): %s", n, missing[n])
			return nil
		}
		return fmt.Errorf("target %s: install script proxies/%s/%s failed: %w\n%s", n, n, d.Install, err, lastLines(tail.String(), 20))
	}
	if _, err := d.Binary(s.CacheBin()); err != nil {
		return fmt.Errorf("target %s: install script ran but %w", n, err)
	}
	s.logf("%-8s installed in %v", n, time.Since(t0).Round(time.Second))
	return nil
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

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
