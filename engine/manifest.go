package engine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/stack"
)

// Manifest is what ran where, written with the results (report.Bench.Manifest): k6's and every
// target's version and the sha256 of its program (proxy_sha256), the TLS profile and what each
// target's TLS protocols negotiated (tls: target → h1/h2/h3 → version, group, cipher,
// resumption), kernel, CPU model and count, the sha256 of targets.json, of every rendered proxy
// config and of every scenario script, the profile, the pinning layout and the git commit (and
// whether the tree had changes). st is the stack's state (nil: not read), here or on the stack
// host.
func Manifest(ctx context.Context, s *stack.Stack, st *stack.State, k6 string, names []string, profile string) map[string]any {
	cpus := sample.CPUsAvailable()
	m := map[string]any{
		"k6_version": stack.FirstLine(commandOutput(ctx, s.Root, k6, "version")),
		"kernel":     strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")),
		"cpu_model":  cpuModel(),
		"cpus":       cpus,
		"profile":    profile,
		"pinning":    fmt.Sprintf("none: client, proxies and upstream share %d CPUs", cpus),
		"git_commit": "unknown",
	}
	if s.Pin != nil {
		m["pinning"] = s.Pin.String()
	}
	if c := stack.FirstLine(commandOutput(ctx, s.Root, "git", "rev-parse", "HEAD")); c != "" {
		m["git_commit"] = c
		// a figure from a tree with changes is not reproducible from the commit alone
		m["git_dirty"] = strings.TrimSpace(commandOutput(ctx, s.Root, "git", "status", "--porcelain", "--untracked-files=no")) != ""
	}
	proxies, sums, installed := map[string]string{}, map[string]string{}, map[string]string{}
	if st != nil {
		for n, r := range st.Targets {
			proxies[n] = r.Version
			if r.SHA256 != "" {
				sums[n] = r.SHA256
			}
			// which revision of a moving registry was taken (proxies/pins.sh)
			if from := s.Installed(n); from != "" {
				installed[n] = from
			}
		}
		// what each target's TLS protocols negotiated when it was verified against the profile
		m["tls"] = st.Negotiated()
		if st.TLS != nil {
			m["tls_profile"] = map[string]any{
				"name": st.TLSProfile, "version": st.TLS.Version, "group": st.TLS.Group,
				"cipher": st.TLS.Cipher, "resumption": st.TLS.Resumption,
			}
		}
		for n, why := range st.Missing {
			proxies[n] = why
		}
	}
	m["proxies"] = proxies
	m["proxy_sha256"] = sums
	m["installed_from"] = installed
	hashes := map[string]string{}
	if h := fileHash(s.TargetsFile); h != "" {
		hashes["targets.json"] = h
	}
	defs, _ := s.Definitions(names) // a target without a folder has no config to hash
	for n, d := range defs {
		f := d.ConfigFile(filepath.Join(s.RunDir, n))
		if h := fileHash(f); h != "" {
			hashes[n+"/"+filepath.Base(f)] = h
		}
	}
	// the scripts that measured, and the catalogue that gives their modes and profiles: a change
	// to a check, a threshold or a profile changes what a figure means
	scripts, _ := filepath.Glob(filepath.Join(s.Root, "scenarios", "*.js"))
	scripts = append(scripts, filepath.Join(s.Root, "scenarios", "catalogue.json"))
	libs, _ := filepath.Glob(filepath.Join(s.Root, "scenarios", "lib", "*.js"))
	native, _ := filepath.Glob(filepath.Join(s.Root, "scenarios", "native", "*.js"))
	for _, f := range slices.Concat(scripts, libs, native) {
		if h := fileHash(f); h != "" {
			rel, _ := filepath.Rel(s.Root, f)
			hashes[rel] = h
		}
	}
	m["config_hashes"] = hashes
	return m
}

// Apart records in m that the load and the stack ran on two hosts: which ran what, and the CPUs
// of each (the stack host's when its state says them), in place of the shared CPUs.
func (rs *RemoteStack) Apart(m map[string]any) {
	load, _ := os.Hostname()
	stackCPUs := any("not reported by the stack host")
	if rs.State.CPUs > 0 {
		stackCPUs = rs.State.CPUs
	}
	m["hosts"] = map[string]any{
		"load":  map[string]any{"name": load, "cpus": m["cpus"], "cpu_model": m["cpu_model"], "kernel": m["kernel"], "ran": "k6"},
		"stack": map[string]any{"address": rs.Config.Address, "agent": rs.Agent.Addr(), "cpus": stackCPUs, "ran": "the targets and the upstream"},
	}
	m["pinning"] = fmt.Sprintf("none: the load on %s (%v CPUs), the stack on %s (CPUs: %v)", load, m["cpus"], rs.Config.Address, stackCPUs)
	// what the stack host installed and rendered is not this host's to read: anything of it
	// here is another stack's
	delete(m, "installed_from")
	if hashes, ok := m["config_hashes"].(map[string]string); ok {
		for k := range hashes {
			n, _, _ := strings.Cut(k, "/")
			if _, rendered := rs.Config.Targets[n]; rendered && n != k {
				delete(hashes, k)
			}
		}
	}
}

func commandOutput(ctx context.Context, dir, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// cpuModel is /proc/cpuinfo's first "model name" (x86) or, failing that, its "Hardware" or
// "CPU part" line (ARM), else "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	found := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if ok && v != "" && found[k] == "" {
			found[k] = v
		}
	}
	for _, k := range []string{"model name", "Hardware", "CPU part"} {
		if found[k] != "" {
			return found[k]
		}
	}
	return "unknown"
}

func fileHash(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
