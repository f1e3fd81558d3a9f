package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodConfig = `{"hostname":"bench.test","address":"127.0.0.1","workers":1,"upstream_keepalive":8,
"upload_limit_bytes":1024,"upstream":{"h1c":9000},
"targets":{"direct":{"tls":8440,"h1c":9000},"nginx":{"tls":8441,"h1c":8081},"caddy":{"tls":8442,"h1c":8082}}}`

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mutate  func(string) string
		wantErr string
	}{
		{"good", func(s string) string { return s }, ""},
		{"unknown key", func(s string) string { return strings.Replace(s, `"workers"`, `"wokers"`, 1) }, `unknown field "wokers"`},
		{"not loopback", func(s string) string { return strings.Replace(s, `"127.0.0.1"`, `"10.0.0.1"`, 1) }, "loopback only"},
		{"no direct", func(s string) string { return strings.Replace(s, `"direct"`, `"baseline"`, 1) }, `no "direct" entry`},
		{"direct not upstream", func(s string) string { return strings.Replace(s, `"h1c":9000}`, `"h1c":9001}`, 1) }, "must match"},
		{"duplicate port", func(s string) string { return strings.Replace(s, `"tls":8442`, `"tls":8441`, 1) }, "targets.nginx.tls: port 8441 is already caddy.tls"},
		{"port out of range", func(s string) string { return strings.Replace(s, `"tls":8442`, `"tls":70000`, 1) }, "not a port"},
		{"zero workers", func(s string) string { return strings.Replace(s, `"workers":1`, `"workers":0`, 1) }, `"workers" is 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, t.TempDir(), "targets.json", tc.mutate(goodConfig))
			c, err := LoadConfig(p)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("LoadConfig: %v", err)
				}
				if got := strings.Join(c.Names(), ","); got != "direct,caddy,nginx" {
					t.Errorf("Names() = %s, want direct first then sorted", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("LoadConfig error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(writeFile(t, t.TempDir(), "targets.json", goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec, want, wantErr string
	}{
		{"all", "direct,caddy,nginx", ""},
		{"", "direct,caddy,nginx", ""},
		{"nginx, direct", "nginx,direct", ""},
		{"ngnix", "", "unknown target \"ngnix\": valid targets are all, direct, caddy, nginx"},
	}
	for _, tc := range tests {
		got, err := c.Select(tc.spec)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("Select(%q) error = %v, want %q", tc.spec, err, tc.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("Select(%q) = %v, %v; want %s", tc.spec, got, err, tc.want)
		}
	}
}

// The repository's own targets file must load: every engine and scenario reads it.
func TestRepositoryTargetsFile(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig("../targets.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Names() {
		if n == Direct {
			continue
		}
		if _, err := LoadDefinition("../proxies", n); err != nil {
			t.Errorf("target %s is in targets.json but its folder does not load: %v", n, err)
		}
	}
}
