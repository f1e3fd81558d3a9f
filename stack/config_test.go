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
"upload_limit_bytes":1024,"upstream":{"h1c":9000},"tls_profile":"x25519","tls_profiles":{
"x25519":{"version":"1.3","group":"X25519","cipher":"TLS_AES_128_GCM_SHA256","resumption":false},
"pq":{"version":"1.3","group":"X25519MLKEM768","cipher":"TLS_AES_128_GCM_SHA256","resumption":false}},
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
		{"admin port taken", func(s string) string { return strings.Replace(s, `"h1c":8082}`, `"h1c":8082,"admin":8081}`, 1) }, "targets.nginx.h1c: port 8081 is already caddy.admin"},
		{"admin port out of range", func(s string) string { return strings.Replace(s, `"h1c":8082}`, `"h1c":8082,"admin":-1}`, 1) }, "targets.caddy.admin is -1: not a port"},
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
		{"nginx,,nginx, ", "nginx", ""},
		{" , ", "", `target list "," names no target: valid targets are all, direct, caddy, nginx`},
		{"all,nginx", "", `target list "all,nginx": all stands alone (every target), not in a list; valid targets are all, direct, caddy, nginx`},
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

// The TLS profile: the one in use must be defined, and each definition must name a version,
// group and cipher the targets and the probe know, without resumption; errors name the field
// and say what is valid.
func TestLoadConfigTLSProfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mutate  func(string) string
		wantErr string
	}{
		{
			"unknown profile", func(s string) string { return strings.Replace(s, `"tls_profile":"x25519"`, `"tls_profile":"x448"`, 1) },
			`"tls_profile" is "x448": valid profiles are pq, x25519 (tls_profiles)`,
		},
		{
			"no profile", func(s string) string { return strings.Replace(s, `"tls_profile":"x25519",`, ``, 1) },
			`"tls_profile" is "": valid profiles are pq, x25519`,
		},
		{"no profiles", func(s string) string {
			return s[:strings.Index(s, `"tls_profiles"`)] + `"tls_profiles":{},` + s[strings.Index(s, `"targets"`):]
		}, `"tls_profiles" is empty`},
		{
			"unknown group", func(s string) string { return strings.Replace(s, `"group":"X25519"`, `"group":"x25519"`, 1) },
			`tls_profiles.x25519.group is "x25519": valid groups are X25519, X25519MLKEM768, P-256, P-384`,
		},
		{"unknown cipher", func(s string) string {
			return strings.Replace(s, `"cipher":"TLS_AES_128_GCM_SHA256"`, `"cipher":"ECDHE-RSA-AES128-GCM-SHA256"`, 1)
		}, `tls_profiles.x25519.cipher is "ECDHE-RSA-AES128-GCM-SHA256": valid TLS 1.3 cipher suites are TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256`},
		{
			"TLS 1.2", func(s string) string { return strings.Replace(s, `"version":"1.3"`, `"version":"1.2"`, 1) },
			`tls_profiles.x25519.version is "1.2": the one valid version is "1.3"`,
		},
		{
			"resumption", func(s string) string { return strings.Replace(s, `"resumption":false`, `"resumption":true`, 1) },
			`tls_profiles.x25519.resumption is true: only false is valid`,
		},
		{
			"unknown key", func(s string) string { return strings.Replace(s, `"resumption":false`, `"tickets":false`, 1) },
			`unknown field "tickets"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadConfig(writeFile(t, t.TempDir(), "targets.json", tc.mutate(goodConfig)))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("LoadConfig error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TLS_PROFILE picks another profile of the file for every target; one the file lacks is an
// error naming the variable and the valid profiles.
func TestTLSProfile(t *testing.T) {
	path := writeFile(t, t.TempDir(), "targets.json", goodConfig)
	for _, tc := range []struct{ env, want, wantErr string }{
		{"", "x25519", ""},
		{"pq", "pq", ""},
		{"x448", "", `TLS_PROFILE=x448: TLS profile "x448" is not in tls_profiles: valid profiles are pq, x25519`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			s, err := New(Paths{TargetsFile: path}, tc.env, nil)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("New error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name, p := s.Config.TLS()
			if name != tc.want || p.Group == "" {
				t.Errorf("TLS profile %q (%+v), want %q", name, p, tc.want)
			}
		})
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

// A malformed targets file fails naming the file and the line:column of the fault, so that an
// editor can jump there.
func TestLoadConfigSaysWhere(t *testing.T) {
	t.Parallel()
	// goodConfig's second line is `"upload_limit_bytes":1024,"upstream":{"h1c":9000},…`.
	tests := []struct {
		name   string
		mutate func(string) string
		want   string // after "<path>:"
	}{
		{"syntax", func(s string) string {
			return strings.Replace(s, `"upstream":{"h1c":9000}`, `"upstream":{"h1c":9000,}`, 1)
		}, `2:50: invalid character '}' looking for beginning of object key string`},
		{"truncated", func(s string) string { return s[:strings.Index(s, "\n")+10] }, `2:9: unexpected end of JSON input (the file is truncated or a bracket is missing)`},
		{"after the value", func(s string) string { return s + "\n}" }, `6:1: invalid character '}' after top-level value`},
		{"wrong type", func(s string) string { return strings.Replace(s, `"workers":1`, `"workers":"1"`, 1) }, `1:60: "workers" is a JSON string, want a whole number`},
		{"wrong nested type", func(s string) string {
			return strings.Replace(s, `"upstream":{"h1c":9000}`, `"upstream":{"h1c":true}`, 1)
		}, `2:48: "upstream.h1c" is a JSON bool, want a whole number`},
		{"unknown key", func(s string) string { return strings.Replace(s, `"upstream":{`, `"upstrem":{`, 1) }, `2:27: unknown field "upstrem"`},
		{"not an object", func(string) string { return "[1]" }, `1:1: the file is a JSON array, want an object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, t.TempDir(), "targets.json", tc.mutate(goodConfig))
			_, err := LoadConfig(p)
			if err == nil || err.Error() != p+":"+tc.want {
				t.Fatalf("LoadConfig error = %v, want %s:%s", err, p, tc.want)
			}
		})
	}
}
