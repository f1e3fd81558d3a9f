package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// `make setup GODOXY_RELEASE=vX.Y.Z` downloads GoDoxy's release binary and keeps it only when
// its sha256 is the one the repository's list holds. Here the release server is a local one on
// loopback, as the tests never reach the internet.
func TestGoDoxyReleaseFetch(t *testing.T) {
	asset := map[string]string{"amd64": "godoxy-linux-amd64", "arm64": "godoxy-linux-arm64"}[runtime.GOARCH]
	if asset == "" {
		t.Skipf("GoDoxy publishes no binary for linux/%s", runtime.GOARCH)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// a stand-in for the release binary: it prints GoDoxy's start-up line, as the wrapper's
	// --version reads it
	good := []byte("#!/bin/sh\necho 'INF GoDoxy version v9.9.9'\nexit 1\n")
	sum := sha256.Sum256(good)
	goodSum := hex.EncodeToString(sum[:])
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/v9.9.9/" + asset:
			_, _ = w.Write(good)
		case "/v9.9.8/" + asset:
			_, _ = w.Write(append(slices.Clip(good), '#')) // not the listed file
		default:
			http.NotFound(w, r)
		}
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	defer srv.Close()

	sums := filepath.Join(t.TempDir(), "release.sha256")
	lines := "# test list\n" +
		goodSum + "  v9.9.9/" + asset + "\n" +
		goodSum + "  v9.9.8/" + asset + "\n" + // the server's v9.9.8 differs: a wrong hash
		goodSum + "  v9.9.7/" + asset + "\n" // the server has no v9.9.7: a missing file
	if err := os.WriteFile(sums, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	install := func(t *testing.T, cache, version string) (string, error) {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(root, "proxies", "godoxy", "install.sh"))
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GODOXY_") && !strings.HasPrefix(kv, "PROXYBENCH_CACHE=") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, "PROXYBENCH_CACHE="+cache, "GODOXY_RELEASE="+version,
			"GODOXY_RELEASE_URL="+srv.URL, "GODOXY_RELEASE_SHA256="+sums)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	linked := func(cache string) string {
		p, _ := filepath.EvalSymlinks(filepath.Join(cache, "bin", "godoxy-release"))
		return p
	}

	t.Run("good file", func(t *testing.T) {
		cache := t.TempDir()
		out, err := install(t, cache, "v9.9.9")
		if err != nil {
			t.Fatalf("install: %v\n%s", err, out)
		}
		want := filepath.Join(cache, "godoxy", "v9.9.9", asset)
		if got := linked(cache); got != want {
			t.Errorf("godoxy-release links to %q, want %q", got, want)
		}
		if data, _ := os.ReadFile(want); string(data) != string(good) {
			t.Errorf("%s is not the file served", want)
		}
		if !strings.Contains(out, "godoxy v9.9.9") {
			t.Errorf("install does not print the version read from the binary:\n%s", out)
		}
		if rec, _ := os.ReadFile(filepath.Join(cache, "installed", "godoxy")); !strings.Contains(string(rec), goodSum) {
			t.Errorf("installed/godoxy %q does not name the sha256", rec)
		}
		// a second setup takes the verified file from the cache
		before := hits.Load()
		if out, err := install(t, cache, "v9.9.9"); err != nil {
			t.Fatalf("second install: %v\n%s", err, out)
		}
		if hits.Load() != before {
			t.Error("a second install downloaded again instead of using the verified file in the cache")
		}
	})

	for _, tc := range []struct {
		name, version, want string
		fetched             bool
	}{
		{"wrong hash", "v9.9.8", "refused, nothing kept", true},
		{"missing file", "v9.9.7", "could not download " + srv.URL + "/v9.9.7/" + asset, true},
		{"version not in the list", "v9.9.6", "keeps no sha256 for v9.9.6/" + asset, false},
		{"not a tag", "latest", "is not a release tag", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			before := hits.Load()
			out, err := install(t, cache, tc.version)
			if err == nil {
				t.Fatalf("install GODOXY_RELEASE=%s succeeded:\n%s", tc.version, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("install GODOXY_RELEASE=%s says:\n%s\nwant it to say %q", tc.version, out, tc.want)
			}
			if got := linked(cache); got != "" {
				t.Errorf("godoxy-release links to %s after a failed install", got)
			}
			left, _ := filepath.Glob(filepath.Join(cache, "godoxy", "*", "*"))
			hidden, _ := filepath.Glob(filepath.Join(cache, "godoxy", "*", ".*"))
			if len(left)+len(hidden) > 0 {
				t.Errorf("a failed install left %v", append(left, hidden...))
			}
			if fetched := hits.Load() != before; fetched != tc.fetched {
				t.Errorf("server asked: %v, want %v (nothing is fetched without a listed sha256)", fetched, tc.fetched)
			}
		})
	}
}
