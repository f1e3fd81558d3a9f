package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefinitionRenderAndArgv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "demo/target.json", `{"config":"demo.conf.tmpl","command":["sh","-c","{{.ConfigFile}}"],
"version":["sh","--version"],"install":"install.sh","protocols":["h1","h2"],"env":{"GOMAXPROCS":"{{.Workers}}"}}`)
	writeFile(t, dir, "demo/demo.conf.tmpl", "listen {{.Addr}}:{{.TLSPort}} -> {{.UpstreamAddr}} workers={{.Workers}}\n")
	d, err := LoadDefinition(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	v := Vars{Name: "demo", Addr: "127.0.0.1", TLSPort: 8441, UpstreamAddr: "127.0.0.1:9000", Workers: 3, RunDir: run, ConfigFile: d.ConfigFile(run)}
	if err := d.Render(v); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(v.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "listen 127.0.0.1:8441 -> 127.0.0.1:9000 workers=3\n"; string(got) != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	argv, err := d.Argv(v, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(argv[0], "/sh") || argv[2] != v.ConfigFile {
		t.Errorf("argv = %v", argv)
	}
	env, err := d.Environ(v)
	if err != nil {
		t.Fatal(err)
	}
	if env[len(env)-1] != "GOMAXPROCS=3" {
		t.Errorf("env ends with %q, want GOMAXPROCS=3", env[len(env)-1])
	}
}

func TestDefinitionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"unknown key", `{"config":"a","command":["x"],"version":["x"],"protocols":["h1"],"port":1}`, `unknown field "port"`},
		{"no command", `{"config":"a","command":[],"version":["x"],"protocols":["h1"]}`, `"command" is empty`},
		{"unknown protocol", `{"config":"a","command":["x"],"version":["x"],"protocols":["h1","quic"]}`, `"protocols": unknown protocol "quic": protocols are h1, h1c, h2, h3`},
		{"no folder", "", "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.body != "" {
				writeFile(t, dir, "p/target.json", tc.body)
			}
			_, err := LoadDefinition(dir, "p")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "target p") {
				t.Fatalf("error = %v, want it to name the target and contain %q", err, tc.want)
			}
		})
	}
	// A template that names a field we do not have must fail, not render "<no value>".
	dir := t.TempDir()
	writeFile(t, dir, "p/target.json", `{"config":"c.tmpl","command":["sh"],"version":["sh"],"protocols":["h1"]}`)
	writeFile(t, dir, "p/c.tmpl", "{{.Nope}}")
	d, err := LoadDefinition(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	if err := d.Render(Vars{ConfigFile: d.ConfigFile(run)}); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("Render with unknown field: error = %v", err)
	}
}

func TestLookBinaryNotInstalled(t *testing.T) {
	t.Parallel()
	_, err := LookBinary("no-such-proxy-binary", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "is not installed") {
		t.Fatalf("error = %v", err)
	}
}

// The build a figure came from is named by the program that runs, not by a wrapper around it.
func TestBinarySHA256(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	writeFile(t, bin, "wrapper", "#!/bin/sh\n")
	writeFile(t, bin, "real", "the real program")
	for _, tc := range []struct {
		name, binary, want string
	}{
		{"command itself", "", "wrapper"},
		{"binary named", `,"binary":"real"`, "real"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "p/target.json", `{"config":"c","command":["wrapper"],"version":["x"],"protocols":["h1"]`+tc.binary+`}`)
			d, err := LoadDefinition(dir, "p")
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.BinarySHA256(bin)
			if err != nil {
				t.Fatal(err)
			}
			want, err := FileSHA256(bin + "/" + tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("BinarySHA256 = %s, want %s's %s", got, tc.want, want)
			}
		})
	}
	// sha256sum's answer for the same content
	if got, err := FileSHA256(bin + "/real"); got != "99fb4115e13eb126dc1ecda7d3e563a516a0a5569038ac1ee6d4450fc3b260ba" {
		t.Errorf("FileSHA256 = %q, %v", got, err)
	}
}

// A malformed target.json fails naming the file and the line:column; a malformed config
// template fails at render naming the template's path and line, whichever proxy it is.
func TestDefinitionErrorsSayWhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeFile(t, dir, "p/target.json", "{\n  \"config\": \"c.tmpl\",\n  \"command\": [\"sh\"]\n  \"version\": [\"sh\"]\n}")
	_, err := LoadDefinition(dir, "p")
	if want := "target p: " + path + ":4:3: invalid character '\"' after object key:value pair"; err == nil || err.Error() != want {
		t.Errorf("LoadDefinition error = %v, want %s", err, want)
	}

	writeFile(t, dir, "p/target.json", `{"config":"c.tmpl","command":["sh"],"version":["sh"],"protocols":["h1"]}`)
	tmpl := filepath.Join(dir, "p", "c.tmpl")
	tests := []struct {
		name, body, want string
	}{
		{"parse", "listen {{.H1CPort}};\nserver {{.Host}\n", tmpl + `:2: bad character U+007D '}'`},
		{"unknown function", "a\nb\n{{nope .Host}}\n", tmpl + `:3: function "nope" not defined`},
		{"unknown field", "a\n  {{.Nope}}\n", tmpl + `:2:4: executing "c.tmpl" at <.Nope>: can't evaluate field Nope in type stack.Vars; the fields are .Name, .Host,`},
		{"method error", "{{.TLS.CaddyCurve}}", tmpl + `:1:6: executing "c.tmpl" at <.TLS.CaddyCurve>: error calling CaddyCurve: TLS group P-999: Caddy 2.6`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, dir, "p/c.tmpl", tc.body)
			d, err := LoadDefinition(dir, "p")
			if err != nil {
				t.Fatal(err)
			}
			err = d.Render(Vars{ConfigFile: d.ConfigFile(t.TempDir()), TLS: TLSVars{Group: "P-999"}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "target p: ") {
				t.Fatalf("Render error = %v, want it to name the target and contain %q", err, tc.want)
			}
		})
	}
}
