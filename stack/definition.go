package stack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
)

// Definition is proxies/<name>/target.json: how one proxy is installed, configured and started.
// Adding a proxy is adding such a folder plus its ports in targets.json; no code changes.
type Definition struct {
	Name string `json:"-"`
	Dir  string `json:"-"`

	Config    string            `json:"config"`
	Command   []string          `json:"command"`
	Version   []string          `json:"version"`
	Install   string            `json:"install"`
	Protocols []string          `json:"protocols"`
	Env       map[string]string `json:"env"`
	// Optional targets may be missing: one no registry serves is skipped, not fatal, and
	// IfMissing tells the user how to add it wherever the target shows.
	Optional  bool   `json:"optional"`
	IfMissing string `json:"if_missing"`
}

// LoadDefinition reads proxies/<name>/target.json.
func LoadDefinition(proxiesDir, name string) (*Definition, error) {
	dir := filepath.Join(proxiesDir, name)
	path := filepath.Join(dir, "target.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	d := &Definition{Name: name, Dir: dir}
	if err := dec.Decode(d); err != nil {
		return nil, fmt.Errorf("target %s: parse %s: %w", name, path, err)
	}
	var errs []error
	if d.Config == "" {
		errs = append(errs, errors.New(`"config" is empty`))
	}
	if len(d.Command) == 0 {
		errs = append(errs, errors.New(`"command" is empty`))
	}
	if len(d.Version) == 0 {
		errs = append(errs, errors.New(`"version" is empty`))
	}
	if len(d.Protocols) == 0 {
		errs = append(errs, errors.New(`"protocols" is empty`))
	}
	for _, p := range d.Protocols {
		// A misspelt protocol would otherwise never be probed nor measured, silently.
		if _, err := ParseProtocol(p); err != nil {
			errs = append(errs, fmt.Errorf(`"protocols": %w`, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("target %s: %s: %w", name, path, err)
	}
	return d, nil
}

// Vars are the fields a config template and a command may use (CONTRIBUTING.md lists them).
type Vars struct {
	Name         string
	Host         string
	Addr         string
	TLSPort      int
	H1CPort      int
	UpstreamAddr string // host:port, for configs that take them together
	UpstreamHost string
	UpstreamPort int
	CertFile     string
	KeyFile      string
	CAFile       string
	RunDir       string
	ConfigFile   string
	Workers      int
	Keepalive    int
	UploadLimit  int64
}

// ConfigFile is where the rendered config lands: the template's name without .tmpl.
func (d *Definition) ConfigFile(runDir string) string {
	return filepath.Join(runDir, strings.TrimSuffix(d.Config, ".tmpl"))
}

// Render writes the proxy's config from its template.
func (d *Definition) Render(v Vars) error {
	tmplPath := filepath.Join(d.Dir, d.Config)
	t, err := template.New(d.Config).Option("missingkey=error").ParseFiles(tmplPath)
	if err != nil {
		return fmt.Errorf("target %s: parse config template: %w", d.Name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return fmt.Errorf("target %s: render %s: %w", d.Name, tmplPath, err)
	}
	return os.WriteFile(v.ConfigFile, buf.Bytes(), 0o644)
}

// expand renders each word of a command (or each value of env) as a template.
func expand(name string, words []string, v Vars) ([]string, error) {
	out := make([]string, len(words))
	for i, w := range words {
		t, err := template.New(name).Option("missingkey=error").Parse(w)
		if err != nil {
			return nil, fmt.Errorf("target %s: word %q: %w", name, w, err)
		}
		var buf strings.Builder
		if err := t.Execute(&buf, v); err != nil {
			return nil, fmt.Errorf("target %s: word %q: %w", name, w, err)
		}
		out[i] = buf.String()
	}
	return out, nil
}

// Argv is the start command with its binary resolved and its words rendered.
func (d *Definition) Argv(v Vars, cacheBin string) ([]string, error) {
	argv, err := expand(d.Name, d.Command, v)
	if err != nil {
		return nil, err
	}
	bin, err := LookBinary(argv[0], cacheBin)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", d.Name, err)
	}
	argv[0] = bin
	return argv, nil
}

// Environ is the environment the proxy starts with: ours plus the definition's env map.
func (d *Definition) Environ(v Vars) ([]string, error) {
	env := os.Environ()
	for k, val := range d.Env {
		got, err := expand(d.Name, []string{val}, v)
		if err != nil {
			return nil, err
		}
		env = append(env, k+"="+got[0])
	}
	return env, nil
}

// Binary resolves the proxy's binary, or says it is not installed.
func (d *Definition) Binary(cacheBin string) (string, error) {
	return LookBinary(d.Command[0], cacheBin)
}

// LookBinary finds a program in the project's cache bin first, then on PATH.
func LookBinary(name, cacheBin string) (string, error) {
	if strings.ContainsRune(name, '/') {
		if _, err := os.Stat(name); err != nil {
			return "", fmt.Errorf("binary %s: %w", name, err)
		}
		return name, nil
	}
	p := filepath.Join(cacheBin, name)
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not installed (not in %s nor on PATH)", name, cacheBin)
	}
	return p, nil
}
