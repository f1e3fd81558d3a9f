package stack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryTemplatesRenderTheTLSProfile: every proxy of the repository renders with every
// TLS profile of targets.json, and takes the profile's group from the stack (in its config,
// its command line or, through OPENSSL_CONF, the OpenSSL configuration the stack writes), so
// that one setting changes every target alike. A group no library knows is rendered too, and
// must show up, so that nothing is hard-coded.
func TestRepositoryTemplatesRenderTheTLSProfile(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig("../targets.json")
	if err != nil {
		t.Fatal(err)
	}
	profiles := c.TLSProfiles
	profiles["sentinel"] = TLSProfile{Version: "1.3", Group: "GROUP-SENTINEL", Cipher: "CIPHER-SENTINEL"}
	for _, n := range c.Names() {
		if n == Direct {
			continue
		}
		d, err := LoadDefinition("../proxies", n)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range profiles {
			t.Run(n+"/"+name, func(t *testing.T) {
				t.Parallel()
				run := t.TempDir()
				v := Vars{
					Name: n, Host: "bench.test", Addr: "127.0.0.1", TLSPort: 8441, H1CPort: 8081,
					UpstreamAddr: "127.0.0.1:9000", UpstreamHost: "127.0.0.1", UpstreamPort: 9000,
					CertFile: "/c/leaf.crt", KeyFile: "/c/leaf.key", CAFile: "/c/ca.crt",
					RunDir: run, ConfigFile: d.ConfigFile(run), Workers: 1, Keepalive: 8, UploadLimit: 1024,
					QUICRcvBuf: QUICReceiveBuffer,
					TLS:        NewTLSVars(name, p, filepath.Join(run, openSSLConfName)),
				}
				if err := d.Render(v); err != nil {
					// refusing a group the proxy lacks is right, if the error names it
					if strings.Contains(err.Error(), "TLS group "+p.Group+": ") {
						return
					}
					t.Fatal(err)
				}
				conf, err := os.ReadFile(v.ConfigFile)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(v.ConfigFile, ".json") && !json.Valid(conf) {
					t.Errorf("%s is not valid JSON:\n%s", v.ConfigFile, conf)
				}
				argv, err := expand(n, d.Command, v)
				if err != nil {
					t.Fatal(err)
				}
				var env []string
				for k, val := range d.Env {
					got, err := expand(n, []string{val}, v)
					if err != nil {
						t.Fatal(err)
					}
					env = append(env, k+"="+got[0])
				}
				all := string(conf) + "\n" + strings.Join(argv, " ") + "\n" + strings.Join(env, "\n")
				spelt := []string{p.Group}
				for _, spell := range []func() (string, error){v.TLS.CaddyCurve, v.TLS.TraefikCurve} {
					if g, err := spell(); err == nil {
						spelt = append(spelt, g)
					}
				}
				found := strings.Contains(all, "OPENSSL_CONF="+v.TLS.OpenSSLConf)
				all = strings.ReplaceAll(all, run, "RUNDIR") // the test's name is in it
				for _, g := range spelt {
					// a comment naming the group does not count: the line must set something
					for _, line := range strings.Split(all, "\n") {
						l := strings.TrimSpace(line)
						if strings.Contains(l, g) && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "//") {
							found = true
						}
					}
				}
				if why := takesNoGroup[n]; why != "" {
					if found {
						t.Errorf("%s takes the TLS profile's group now: remove it from takesNoGroup", n)
					}
					return
				}
				if !found {
					t.Errorf("%s does not take the TLS profile's group %s (config, command or OPENSSL_CONF)", n, p.Group)
				}
			})
		}
	}
}

// A group Caddy 2.6 lacks stops the render with an error naming it, rather than a Caddy that
// starts and fails every handshake without saying why.
func TestCaddyRefusesAGroupItLacks(t *testing.T) {
	t.Parallel()
	d, err := LoadDefinition("../proxies", "caddy")
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	pq := TLSProfile{Version: "1.3", Group: "X25519MLKEM768", Cipher: "TLS_AES_128_GCM_SHA256"}
	v := Vars{RunDir: run, ConfigFile: d.ConfigFile(run), TLS: NewTLSVars("pq", pq, filepath.Join(run, openSSLConfName))}
	err = d.Render(v)
	if want := "TLS group X25519MLKEM768: Caddy 2.6 (built with Go 1.19) has no such group"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("render caddy with X25519MLKEM768: %v, want an error saying %q", err, want)
	}
}

// takesNoGroup are the proxies that cannot be given the profile's group, and why.
var takesNoGroup = map[string]string{
	"godoxy": "no TLS settings in GoDoxy's configuration; GODEBUG=tlsmlkem=0 is all (godoxy.yml.tmpl)",
}

// The OpenSSL configuration for proxies without settings of their own holds the profile.
func TestOpenSSLConfText(t *testing.T) {
	t.Parallel()
	v := NewTLSVars("x25519", TLSProfile{Version: "1.3", Group: "X25519", Cipher: "TLS_AES_128_GCM_SHA256"}, "/run/x/openssl.cnf")
	got := v.OpenSSLConfText()
	for _, want := range []string{
		"openssl_conf = proxybench_init", "system_default = proxybench_tls",
		"MinProtocol = TLSv1.3", "MaxProtocol = TLSv1.3", "Groups = X25519",
		"Ciphersuites = TLS_AES_128_GCM_SHA256", "Options = NoTicket", "NumTickets = 0",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("openssl.cnf lacks the line %q:\n%s", want, got)
		}
	}
}

// TestRepositoryTemplatesTakeTheConnectionLimit: every proxy with a setting for its connection
// limit takes the one limit of the stack (.MaxConnections, or nginx's per-worker open files),
// so that no proxy is held below another (h2o's default of 1024 held it to 1023 idle
// connections of 10 000).
func TestRepositoryTemplatesTakeTheConnectionLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ target, line string }{
		{"nginx", "worker_connections 13369;"},
		{"nginx", "worker_rlimit_nofile 13369;"},
		{"haproxy", "maxconn 12345"},
		{"envoy", "max_active_downstream_connections: 12345"},
		{"h2o", "max-connections: 12345"},
	} {
		t.Run(tc.target+"/"+tc.line, func(t *testing.T) {
			t.Parallel()
			d, err := LoadDefinition("../proxies", tc.target)
			if err != nil {
				t.Fatal(err)
			}
			run := t.TempDir()
			v := Vars{
				Name: tc.target, Host: "bench.test", Addr: "127.0.0.1", TLSPort: 8441, H1CPort: 8081,
				UpstreamAddr: "127.0.0.1:9000", UpstreamHost: "127.0.0.1", UpstreamPort: 9000,
				RunDir: run, ConfigFile: d.ConfigFile(run), Workers: 1, Keepalive: 8, UploadLimit: 1024,
				MaxConnections: 12345, OpenFiles: 13369,
				TLS: NewTLSVars("x25519", TLSProfile{Version: "1.3", Group: "X25519", Cipher: "TLS_AES_128_GCM_SHA256"}, filepath.Join(run, openSSLConfName)),
			}
			if err := d.Render(v); err != nil {
				t.Fatal(err)
			}
			conf, err := os.ReadFile(v.ConfigFile)
			if err != nil {
				t.Fatal(err)
			}
			for l := range strings.SplitSeq(string(conf), "\n") {
				if strings.TrimSpace(l) == tc.line {
					return
				}
			}
			t.Errorf("%s's rendered config has no line %q:\n%s", tc.target, tc.line, conf)
		})
	}
}
