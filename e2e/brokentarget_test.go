package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/stack"
)

// TestBrokenTargetsDoNotStopTheRest proves that one target that cannot be installed, and one that
// is installed but does not answer as it claims, never cost the user the other targets' numbers
// when every target was asked for (TARGETS=all): both are rows that say why, in status, tables
// and the report, and the run's exit status and last line name them. Named explicitly, such a
// target is an error at once. The targets are folders of the test's own: a copy of nginx that
// works, one whose install script fails as a withdrawn Debian revision makes it fail, and a copy
// of nginx that returns a short body.
func TestBrokenTargetsDoNotStopTheRest(t *testing.T) {
	h := harnessAt(t, 400, stack.Direct)
	const good, noinstall, unverified = "good", "noinstall", "unverified"

	// An install cache of the test's own, so that the failure it records is not the user's;
	// nginx as `make setup` built it, linked in.
	realCache, err := stack.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	nginx, err := stack.LookBinary("nginx-quic", filepath.Join(realCache, "bin"))
	if err != nil {
		t.Fatalf("nginx is not installed: run `make setup` first: %v", err)
	}
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(nginx, filepath.Join(cache, "bin", "nginx-quic")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PROXYBENCH_CACHE", cache)

	proxies := t.TempDir()
	copyHelpers(t, filepath.Join(h.root, "proxies"), proxies)
	h.copyNginx(t, proxies, nginxVariant{name: good})
	h.copyNginx(t, proxies, nginxVariant{unverified, [][2]string{inLocation("return 200 'short';")}})
	writeFile(t, filepath.Join(proxies, noinstall, "target.json"), `{
  "config": "none.tmpl",
  "command": ["proxybench-test-noinstall"],
  "version": ["proxybench-test-noinstall", "-v"],
  "install": "install.sh",
  "protocols": ["h1", "h1c", "h2"]
}`)
	writeFile(t, filepath.Join(proxies, noinstall, "none.tmpl"), "")
	writeFile(t, filepath.Join(proxies, noinstall, "install.sh"), `#!/usr/bin/env bash
echo "building noinstall" >&2
echo "install: no source of noinstall 1.0 could be had:" >&2
echo "  - 1.0-1 by its pinned sha256: 404  Not Found" >&2
echo "install: set the version variable named in install.sh to a revision that downloads" >&2
exit 1
`)
	t.Setenv("PROXYBENCH_PROXIES", proxies)
	h.addTargets(t, 60, good, noinstall, unverified)

	t.Run("named explicitly: an error at once", func(t *testing.T) {
		for _, cmd := range [][]string{{"setup", "-targets", noinstall}, {"up", "-targets", noinstall + "," + good}, {"up", "-targets", unverified}} {
			out, err := h.proxybench(t, cmd...)
			if err == nil {
				t.Errorf("%v succeeded:\n%s", cmd, out)
			}
			if st := readStateOrEmpty(t, h.run); len(st.Targets) > 0 {
				t.Errorf("%v left targets up: %v", cmd, st.Names())
				h.down(t)
			}
		}
	})

	out, err := h.proxybench(t, "setup")
	if err != nil {
		t.Fatalf("setup with TARGETS=all and a target that cannot be installed: %v\n%s", err, out)
	}
	wantWhy := "install failed: no source of noinstall 1.0 could be had: 1.0-1 by its pinned sha256: 404  Not Found"
	if !strings.Contains(lastLine(out), noinstall+" ("+wantWhy+")") {
		t.Errorf("setup's last line does not say %q:\n%s", wantWhy, out)
	}

	out, err = h.proxybench(t, "up")
	t.Cleanup(func() {
		if st := readStateOrEmpty(t, h.run); len(st.Targets) > 0 {
			h.down(t)
		}
	})
	if err != nil {
		t.Fatalf("up with TARGETS=all and two broken targets: %v\n%s", err, out)
	}
	st := readState(t, h.run)
	if !st.IsUp(good) || !st.IsUp(stack.Direct) {
		t.Errorf("up: %s and direct must be up, state has %v\n%s", good, st.Names(), out)
	}
	if st.Missing[noinstall] != wantWhy {
		t.Errorf("state: %s is %q, want %q", noinstall, st.Missing[noinstall], wantWhy)
	}
	if why := st.Missing[unverified]; !strings.HasPrefix(why, "not verified: target unverified did not answer a verified request") || !strings.Contains(why, "body") {
		t.Errorf("state: %s is %q, want not verified, for its short body", unverified, why)
	}

	out, err = h.proxybench(t, "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for n, want := range map[string]string{good: "h1c ok", noinstall: "install failed", unverified: "not verified"} {
		if !statusLine(out, n, want) {
			t.Errorf("status does not show %s as %q:\n%s", n, want, out)
		}
	}

	out, err = h.proxybench(t, "k6", "-scenario", "reused-h1c", "-testid", "e2e-broken-k6")
	if err != nil {
		t.Errorf("k6 reused-h1c: %v\n%s", err, out)
	}
	for n, want := range map[string]string{noinstall: "install failed", unverified: "not verified"} {
		r, err := result.LoadResult(filepath.Join(h.results, "e2e-broken-k6", "reused-h1c-"+n+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Skipped != want || r.SkipReason != st.Missing[n] || !statusLine(out, n, want) {
			t.Errorf("%s: want a %q row saying %q, got %q (%s)\n%s", n, want, st.Missing[n], r.Skipped, r.SkipReason, out)
		}
	}
	r, err := result.LoadResult(filepath.Join(h.results, "e2e-broken-k6", "reused-h1c-"+good+".json"))
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, "reused-h1c", r)
	h.down(t)

	const testid = "e2e-broken-bench"
	out, err = h.proxybench(t, "bench", "-modes", "probe", "-protos", "h1c", "-testid", testid)
	if err == nil {
		t.Errorf("bench with two broken targets exited 0:\n%s", out)
	}
	last := lastLine(out)
	if !strings.Contains(last, "2 target(s) failed") || !strings.Contains(last, noinstall+" (install failed") || !strings.Contains(last, unverified+" (not verified") {
		t.Errorf("bench's last line does not list what failed: %q\n%s", last, out)
	}
	b, err := report.Build(filepath.Join(h.results, testid))
	if err != nil {
		t.Fatal(err)
	}
	px, _ := b.Manifest["proxies"].(map[string]any)
	if px[noinstall] != wantWhy || !strings.HasPrefix(px[unverified].(string), "not verified: ") {
		t.Errorf("manifest proxies: %v", px)
	}
	rows := map[string]string{}
	for _, c := range b.Cells {
		if c.Scenario == "json" {
			rows[c.Target] = c.NoProto
			if c.Target == good && !c.Valid {
				t.Errorf("json h1c %s: invalid %v: the others must still be measured", good, c.Invalid)
			}
		}
	}
	if rows[noinstall] != "install failed" || rows[unverified] != "not verified" || rows[good] != "" {
		t.Errorf("json h1c rows: %v, want %s install failed, %s not verified, %s measured", rows, noinstall, unverified, good)
	}
	md, err := os.ReadFile(filepath.Join(h.results, testid, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{noinstall + ": install failed", unverified + ": not verified"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md does not say %q", want)
		}
	}
}

// copyHelpers copies the shell helpers install scripts source (proxies/*.sh).
func copyHelpers(t *testing.T, from, to string) {
	t.Helper()
	helpers, _ := filepath.Glob(filepath.Join(from, "*.sh"))
	if len(helpers) == 0 {
		t.Fatalf("no shell helpers in %s", from)
	}
	for _, f := range helpers {
		copyFile(t, f, filepath.Join(to, filepath.Base(f)))
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
		t.Fatal(err)
	}
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// readStateOrEmpty is readState for a run directory that may have none.
func readStateOrEmpty(t *testing.T, runDir string) *stack.State {
	t.Helper()
	if _, err := os.Stat(filepath.Join(runDir, "state.json")); err != nil {
		return &stack.State{}
	}
	return readState(t, runDir)
}
