// Package proxies holds one folder per proxy and the shell helpers their install scripts source;
// its tests run those helpers as the scripts do, with bash, against a fake Debian archive served
// on loopback and signed with a key of the test's own.
package proxies

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// srcFile is one file of a source package revision.
type srcFile struct {
	name string
	data []byte
}

func (f srcFile) sha256() string {
	s := sha256.Sum256(f.data)
	return hex.EncodeToString(s[:])
}

// revision is the fake "demo" source package at one Debian revision of upstream 1.0.
func revision(rev string) []srcFile {
	return []srcFile{
		{"demo_" + rev + ".dsc", []byte("Format: 3.0 (quilt)\nSource: demo\nVersion: " + rev + "\n")},
		{"demo_1.0.orig.tar.gz", []byte("upstream tarball of demo 1.0\n")},
		{"demo_" + rev + ".debian.tar.xz", []byte("debian directory of " + rev + "\n")},
	}
}

// specs are a revision's "SHA256 FILE" arguments, as an install script pins them.
func specs(files []srcFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.sha256() + " " + f.name
	}
	return out
}

// archive is a fake Debian mirror: a signed Sources index of trixie and a pool.
type archive struct {
	t    *testing.T
	dir  string // the mirror's root
	gpg  string // GNUPGHOME of the signing key
	keys string // the keyring apt checks the index against
}

// newArchive makes the signing key once per test: gpg with a home of its own, so the machine's
// keys play no part.
func newArchive(t *testing.T) *archive {
	t.Helper()
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Fatalf("gpg is needed to sign the fake archive's index (Debian's gnupg): %v", err)
	}
	a := &archive{t: t, dir: t.TempDir(), gpg: t.TempDir()}
	a.keys = filepath.Join(t.TempDir(), "archive-keyring.gpg")
	a.run("gpg", "--batch", "--passphrase", "", "--quick-gen-key", "proxybench test archive <test@bench.test>", "ed25519", "sign", "never")
	out := a.run("gpg", "--batch", "--export")
	if err := os.WriteFile(a.keys, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return a
}

func (a *archive) run(name string, args ...string) []byte {
	a.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "GNUPGHOME="+a.gpg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		a.t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	return out
}

// publish writes the pool (the files of each revision in pool) and an index listing the
// revisions in listed, each with its files' hashes, signed.
func (a *archive) publish(pool []srcFile, listed map[string][]srcFile) {
	a.t.Helper()
	poolDir := filepath.Join(a.dir, "pool", "main", "d", "demo")
	dists := filepath.Join(a.dir, "dists", "trixie")
	for _, d := range []string{poolDir, filepath.Join(dists, "main", "source")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			a.t.Fatal(err)
		}
	}
	for _, f := range pool {
		if err := os.WriteFile(filepath.Join(poolDir, f.name), f.data, 0o644); err != nil {
			a.t.Fatal(err)
		}
	}
	var sources strings.Builder
	for rev, files := range listed {
		fmt.Fprintf(&sources, "Package: demo\nBinary: demo\nVersion: %s\nMaintainer: Test <test@bench.test>\nArchitecture: any\nFormat: 3.0 (quilt)\nDirectory: pool/main/d/demo\nFiles:\n", rev)
		for _, f := range files {
			fmt.Fprintf(&sources, " %x %d %s\n", md5.Sum(f.data), len(f.data), f.name)
		}
		sources.WriteString("Checksums-Sha256:\n")
		for _, f := range files {
			fmt.Fprintf(&sources, " %s %d %s\n", f.sha256(), len(f.data), f.name)
		}
		sources.WriteString("\n")
	}
	idx := []byte(sources.String())
	if err := os.WriteFile(filepath.Join(dists, "main", "source", "Sources"), idx, 0o644); err != nil {
		a.t.Fatal(err)
	}
	sum := sha256.Sum256(idx)
	release := fmt.Sprintf("Origin: proxybench test\nSuite: trixie\nCodename: trixie\nDate: %s\nComponents: main\nArchitectures: amd64 source\nSHA256:\n %x %d main/source/Sources\n",
		time.Now().UTC().Add(-time.Hour).Format(time.RFC1123Z), sum, len(idx))
	rel := filepath.Join(dists, "Release")
	if err := os.WriteFile(rel, []byte(release), 0o644); err != nil {
		a.t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(dists, "InRelease"))
	a.run("gpg", "--batch", "--yes", "--clearsign", "-o", filepath.Join(dists, "InRelease"), rel)
}

// resolve runs deb_source_resolve as an install script does, with a cache of its own, and
// returns the revision it took and how (or its error output, with ok false).
func resolve(t *testing.T, mirror, keyring, want, pin string, pinned []string) (rev, how, stderr string, ok bool) {
	t.Helper()
	cache := t.TempDir()
	script := `. ./deb-source.sh && deb_source_resolve "$@" && printf '%s\n%s\n' "$DEB_SOURCE_REVISION" "$DEB_SOURCE_HOW"`
	cmd := exec.Command("bash", append([]string{"-euo", "pipefail", "-c", script, "test", "demo", want, pin}, pinned...)...)
	cmd.Env = append(os.Environ(), "PROXYBENCH_CACHE="+cache, "DEB_SOURCE_MIRROR="+mirror,
		"DEB_SOURCE_KEYRING="+keyring, "DEB_SOURCE_SUITES=trixie")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", "", errb.String(), false
	}
	lines := strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)
	if len(lines) != 2 {
		t.Fatalf("deb_source_resolve printed %q", out)
	}
	// what was taken is in the download directory, intact
	for _, f := range []string{"demo_" + lines[0] + ".dsc", "demo_" + lines[0] + ".debian.tar.xz", "demo_1.0.orig.tar.gz"} {
		if _, err := os.Stat(filepath.Join(cache, "build", "dl", f)); err != nil {
			t.Errorf("took %s, but %v", lines[0], err)
		}
	}
	return lines[0], lines[1], errb.String(), true
}

func TestDebSourceResolve(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Fatalf("the source builds need apt (Debian): %v", err)
	}
	a := newArchive(t)
	const pin = "1.0-1+deb13u1"
	u1, u2, u3 := revision(pin), revision("1.0-1+deb13u2"), revision("1.0-1+deb13u3")
	tampered := revision(pin)
	tampered[2].data = []byte("not what was pinned\n")
	other := revision("2.0-1") // another upstream version: never a fallback
	other[1] = srcFile{"demo_2.0.orig.tar.gz", []byte("demo 2.0\n")}

	for _, tc := range []struct {
		name   string
		pool   [][]srcFile
		listed map[string][]srcFile
		want   string // asked for; "" is the pin
		keys   string // "" is the archive's key
		// what must be taken ("" when nothing may be), how it says so, or what the error names
		took, how string
		errHas    []string
	}{
		{
			name: "pinned present", pool: [][]srcFile{u1, u2}, listed: map[string][]srcFile{pin: u1, "1.0-1+deb13u2": u2},
			took: pin, how: "pinned",
		},
		{
			name: "pinned gone from the index but in the pool", pool: [][]srcFile{u1, u2}, listed: map[string][]srcFile{"1.0-1+deb13u2": u2},
			took: pin, how: "pinned",
		},
		{
			name: "pinned gone from the pool: newest listed revision that downloads", pool: [][]srcFile{u2, other}, listed: map[string][]srcFile{"1.0-1+deb13u2": u2, "1.0-1+deb13u3": u3, "2.0-1": other},
			took: "1.0-1+deb13u2", how: "newest of upstream 1.0",
		},
		{
			name: "pool file not the pinned one", pool: [][]srcFile{tampered, u2}, listed: map[string][]srcFile{"1.0-1+deb13u2": u2},
			took: "1.0-1+deb13u2", how: "instead of " + pin,
		},
		{
			name: "asked for a revision that does not exist: the pin", pool: [][]srcFile{u1}, listed: map[string][]srcFile{"1.0-1+deb13u2": u2},
			want: "1.0-1+deb13u99", took: pin, how: "instead of 1.0-1+deb13u99",
		},
		{
			name: "asked for a listed revision", pool: [][]srcFile{u1, u2}, listed: map[string][]srcFile{"1.0-1+deb13u2": u2},
			want: "1.0-1+deb13u2", took: "1.0-1+deb13u2", how: "as asked",
		},
		{
			name: "nothing usable", pool: [][]srcFile{other}, listed: map[string][]srcFile{"1.0-1+deb13u3": u3, "2.0-1": other},
			errHas: []string{pin + " by its pinned sha256", "1.0-1+deb13u3 through the signed index: listed, but its files do not download"},
		},
		{
			name: "index signed by another key", pool: [][]srcFile{u2}, listed: map[string][]srcFile{"1.0-1+deb13u2": u2},
			keys: "other", errHas: []string{pin + " by its pinned sha256", "lists no other revision of upstream 1.0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.RemoveAll(filepath.Join(a.dir, "pool"))
			var pool []srcFile
			for _, files := range tc.pool {
				pool = append(pool, files...)
			}
			a.publish(pool, tc.listed)
			srv := httptest.NewServer(http.FileServer(http.Dir(a.dir)))
			defer srv.Close()
			keys := a.keys
			if tc.keys == "other" {
				keys = newArchive(t).keys
			}
			want := tc.want
			if want == "" {
				want = pin
			}
			rev, how, stderr, ok := resolve(t, srv.URL, keys, want, pin, specs(u1))
			switch {
			case tc.took == "" && ok:
				t.Fatalf("took %s (%s), want nothing", rev, how)
			case tc.took == "":
				for _, s := range tc.errHas {
					if !strings.Contains(stderr, s) {
						t.Errorf("the error does not name %q:\n%s", s, stderr)
					}
				}
			case !ok:
				t.Fatalf("took nothing, want %s:\n%s", tc.took, stderr)
			case rev != tc.took || !strings.Contains(how, tc.how):
				t.Errorf("took %s (%s), want %s (%s…)", rev, how, tc.took, tc.how)
			}
		})
	}
}

// TestNewestFirst checks the order of revisions against dpkg's own, where a plain sort is wrong.
func TestNewestFirst(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1.26.3-3+deb13u7\n1.26.3-3+deb13u10\n1.26.3-3+deb13u9\n", "1.26.3-3+deb13u10 1.26.3-3+deb13u9 1.26.3-3+deb13u7"},
		{"156.0-1~deb12u1\n156.0-1\n150.0-1\n", "156.0-1 156.0-1~deb12u1 150.0-1"},
		{"1:1.0-1\n2.0-1\n", "1:1.0-1 2.0-1"},
		{"2.0-1\n2.0-1\n\n", "2.0-1"},
	} {
		cmd := exec.Command("bash", "-c", `. ./pins.sh && pins_newest_first | paste -sd' '`)
		cmd.Stdin = strings.NewReader(tc.in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("pins_newest_first(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
