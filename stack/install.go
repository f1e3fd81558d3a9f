package stack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Install runs the install script of every proxy whose binary is missing. Scripts are
// idempotent and pinned; they put binaries in the cache or install Debian packages.
func (s *Stack) Install(ctx context.Context, defs map[string]*Definition) error {
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
			return fmt.Errorf("target %s: install script proxies/%s/%s failed: %w\n%s", n, n, d.Install, err, lastLines(tail.String(), 20))
		}
		if _, err := d.Binary(s.CacheBin()); err != nil {
			return fmt.Errorf("target %s: install script ran but %w", n, err)
		}
		s.logf("%-8s installed in %v", n, time.Since(t0).Round(time.Second))
	}
	return nil
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
