package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// checkGoDoxy holds GoDoxy to what only it needs: its API on the stack's admin port with
// credentials made for this run, its version and build named from the binary it runs, and its
// files kept in its run directory. The scenarios measure it like any other target.
func (h *harness) checkGoDoxy(t *testing.T) {
	st := readState(t, h.run)
	r := st.Targets["godoxy"]
	dir := filepath.Join(h.run, "godoxy")

	t.Run("version and build", func(t *testing.T) {
		cache, err := stack.CacheDir()
		if err != nil {
			t.Fatal(err)
		}
		bin, err := filepath.EvalSymlinks(filepath.Join(cache, "bin", "godoxy-release"))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := stack.FileSHA256(bin)
		if err != nil {
			t.Fatal(err)
		}
		if r.SHA256 != sum {
			t.Errorf("state.json godoxy sha256 %q, want the binary's %s (%s)", r.SHA256, sum, bin)
		}
		if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(r.Version) {
			t.Errorf("godoxy version %q: want the X.Y.Z it prints at start-up", r.Version)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "godoxy.log"))
		if !strings.Contains(string(log), "GoDoxy version v"+r.Version) {
			t.Errorf("godoxy.log does not say \"GoDoxy version v%s\":\n%s", r.Version, stack.LastLines(string(log), 20))
		}
		out, err := h.proxybench(t, "status")
		if err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		if !statusLine(out, "godoxy", r.Version+" ") || !statusLine(out, "godoxy", " "+sum[:12]+" ") {
			t.Errorf("status does not show godoxy's version %s and sha256 %s:\n%s", r.Version, sum[:12], out)
		}
		// the API says the same version as the start-up line
		var v string
		getJSON(t, http.DefaultClient, h.api(r, "/api/v1/version"), &v)
		if v != "v"+r.Version {
			t.Errorf("GoDoxy's API says version %q, the stack %q", v, r.Version)
		}
	})

	t.Run("API credentials made for the run", func(t *testing.T) {
		f := filepath.Join(dir, "api-credentials")
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600 (it holds a password)", f, fi.Mode().Perm())
		}
		creds := readEnvFile(t, f)
		if !regexp.MustCompile(`^[0-9a-f]{48}$`).MatchString(creds["GODOXY_API_PASSWORD"]) {
			t.Errorf("%s: GODOXY_API_PASSWORD %q is not 24 random bytes in hex", f, creds["GODOXY_API_PASSWORD"])
		}
		// the repository holds no password of its own: GoDoxy takes the generated one, and only it
		if code := h.apiLogin(t, r, creds["GODOXY_API_USER"], creds["GODOXY_API_PASSWORD"]); code != http.StatusOK {
			t.Errorf("API login with %s's credentials: status %d, want 200", f, code)
		}
		if code := h.apiLogin(t, r, creds["GODOXY_API_USER"], creds["GODOXY_API_PASSWORD"]+"0"); code == http.StatusOK {
			t.Error("API login with a wrong password: status 200, want a refusal")
		}
	})

	t.Run("works in its run directory", func(t *testing.T) {
		// GoDoxy writes config/, data/ and error_pages/ relative to where it runs
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", r.PID))
		if err != nil {
			t.Fatal(err)
		}
		if cwd != dir {
			t.Errorf("GoDoxy runs in %s, want its run directory %s", cwd, dir)
		}
		for _, f := range []string{"config/config.yml", "config/bench.yml", "data"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("GoDoxy's %s is not in its run directory: %v", f, err)
			}
		}
		// and any file it holds open for writing is the run's
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", r.PID))
		for _, fd := range fds {
			l, err := os.Readlink(fd)
			if err != nil || !strings.HasPrefix(l, "/") || strings.HasPrefix(l, "/dev/") || strings.HasPrefix(l, h.run+"/") {
				continue
			}
			if openForWriting(t, r.PID, filepath.Base(fd)) {
				t.Errorf("GoDoxy holds %s open for writing, outside the stack's run directory %s", l, h.run)
			}
		}
	})
}

// openForWriting tells from /proc/PID/fdinfo/FD whether the descriptor was opened with
// O_WRONLY or O_RDWR ("flags:" is octal).
func openForWriting(t *testing.T, pid int, fd string) bool {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd))
	if err != nil {
		return false // closed since
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatalf("fdinfo %s of pid %d: flags %q", fd, pid, v)
			}
			return flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0
		}
	}
	return false
}

// api is a URL on GoDoxy's API (the admin port).
func (h *harness) api(r *stack.Running, path string) string {
	return fmt.Sprintf("http://%s:%d%s", h.cfg.Address, r.Ports.Admin, path)
}

// apiLogin logs in to GoDoxy's API as its web UI does (a CSRF cookie first, then the
// credentials with its token) and returns the login's status.
func (h *harness) apiLogin(t *testing.T, r *stack.Running, user, password string) int {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 5 * time.Second}
	url := h.api(r, "/api/v1/auth/callback")
	res, err := c.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	csrf := ""
	for _, ck := range res.Cookies() {
		if ck.Name == "godoxy_csrf" {
			csrf = ck.Value
		}
	}
	if csrf == "" {
		t.Fatalf("POST %s: no godoxy_csrf cookie (status %d)", url, res.StatusCode)
	}
	body, _ := json.Marshal(map[string]string{"username": user, "password": password})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	// GoDoxy's cookies are Secure: the jar keeps them from plain http, so the CSRF one goes by hand
	req.AddCookie(&http.Cookie{Name: "godoxy_csrf", Value: csrf})
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

func getJSON(t *testing.T, c *http.Client, url string, v any) {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// readEnvFile reads KEY=value lines.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}
