package stack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
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
	// BinaryFile names the program whose sha256 identifies the build that runs, where
	// Command[0] is a wrapper around it (GoDoxy's); empty: Command[0] itself.
	BinaryFile string `json:"binary"`
	// InstallEnv are variables that choose what Install installs (GODOXY_BIN, GODOXY_RELEASE):
	// when one is set, the script runs even though the target is installed, so that a new
	// choice replaces the old one rather than being ignored. The script must be idempotent.
	InstallEnv []string `json:"install_env"`
	// AdminPort says the proxy cannot run without a control port of its own (GoDoxy's API):
	// targets.json must give the target an "admin" port (Vars.AdminPort).
	AdminPort bool `json:"admin_port"`
	// Optional targets may be missing: one no registry serves is skipped, not fatal, and
	// IfMissing tells the user how to add it wherever the target shows.
	Optional  bool   `json:"optional"`
	IfMissing string `json:"if_missing"`
	// TLSDifferences lists what the target negotiates against the TLS profile whatever its
	// config says: protocol → parameter (group, cipher or resumption) → the reason no setting
	// changes it. The check at `make up` records such a difference instead of refusing the
	// target, and status, the manifest and the report show it. Anything not listed must match.
	TLSDifferences map[Protocol]map[string]string `json:"tls_differences"`
}

// TLSDifferenceParams are the TLS profile's parameters a target definition may list as
// differences (Definition.TLSDifferences); the version never differs.
var TLSDifferenceParams = []string{"group", "cipher", "resumption"}

// LoadDefinition reads proxies/<name>/target.json.
func LoadDefinition(proxiesDir, name string) (*Definition, error) {
	dir := filepath.Join(proxiesDir, name)
	path := filepath.Join(dir, "target.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	d := &Definition{Name: name, Dir: dir}
	if err := DecodeJSON(path, data, d, true); err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
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
	for p, params := range d.TLSDifferences {
		if !slices.Contains(d.Protocols, string(p)) || p == H1C {
			errs = append(errs, fmt.Errorf(`"tls_differences": %q is not one of the target's TLS protocols`, p))
		}
		for param, why := range params {
			switch {
			case !slices.Contains(TLSDifferenceParams, param):
				errs = append(errs, fmt.Errorf(`"tls_differences": %s: %q is not a parameter that may differ (%s)`, p, param, strings.Join(TLSDifferenceParams, ", ")))
			case strings.TrimSpace(why) == "":
				errs = append(errs, fmt.Errorf(`"tls_differences": %s: %s: give the reason no setting changes it`, p, param))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("target %s: %s: %w", name, path, err)
	}
	return d, nil
}

// Vars are the fields a config template and a command may use (stack/README.md lists them).
type Vars struct {
	Name         string
	Host         string
	Addr         string
	TLSPort      int
	H1CPort      int
	AdminPort    int    // targets.json "admin": a control port the proxy needs (GoDoxy's API); 0: none
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
	// MaxConnections is the client connections every target may hold at once, the same for
	// all (OpenFiles.MaxConnections); OpenFiles is the soft open-files limit its process has.
	MaxConnections int
	OpenFiles      uint64
	// QUICRcvBuf is the SO_RCVBUF of a QUIC (UDP) listener, bytes, for every target alike
	// (the kernel caps it at net.core.rmem_max).
	QUICRcvBuf int
	// TLS is the TLS profile every target serves (targets.json tls_profile, or TLS_PROFILE).
	TLS TLSVars
}

// QUICReceiveBuffer is every QUIC listener's receive buffer: Envoy's default (208 KiB)
// overflowed under reused-h3, and quic-go servers raise theirs towards 7 MiB on their own, so
// every target that can be told gets the same 4 MiB.
const QUICReceiveBuffer = 4 << 20

// openSSLConfName is the file, in a target's run directory, of TLSVars.OpenSSLConf.
const openSSLConfName = "openssl.cnf"

// TLSVars are the TLS profile for templates: its settings and each library's spelling of them.
type TLSVars struct {
	Profile    string // the profile's name in targets.json
	Version    string // "1.3"
	Group      string // key exchange: X25519, X25519MLKEM768, P-256, P-384 (OpenSSL's and BoringSSL's names)
	Cipher     string // TLS 1.3 cipher suite, IANA's name: TLS_AES_128_GCM_SHA256
	Resumption bool   // false: no session tickets, no session cache

	OpenSSLVersion string // TLSv1.3: nginx ssl_protocols, HAProxy ssl-min-ver, h2o minimum-version
	EnvoyVersion   string // TLSv1_3: Envoy tls_params
	TraefikVersion string // VersionTLS13: Traefik minVersion, maxVersion
	CaddyVersion   string // tls1.3: Caddy protocol_min, protocol_max
	// OpenSSLConf is an OpenSSL configuration file the stack writes beside the rendered config
	// (system_default: the profile's version, group, cipher and no tickets), for a proxy linked
	// with OpenSSL that has no setting of its own: set OPENSSL_CONF to it in target.json env.
	OpenSSLConf string
}

// NewTLSVars spells out the profile named name for templates; openSSLConf is where the
// stack writes the profile's OpenSSL configuration.
func NewTLSVars(name string, p TLSProfile, openSSLConf string) TLSVars {
	v := TLSVars{
		Profile: name, Version: p.Version, Group: p.Group, Cipher: p.Cipher, Resumption: p.Resumption,
		OpenSSLConf: openSSLConf,
	}
	switch p.Version {
	case "1.3":
		v.OpenSSLVersion, v.EnvoyVersion, v.TraefikVersion, v.CaddyVersion = "TLSv1.3", "TLSv1_3", "VersionTLS13", "tls1.3"
	}
	return v
}

// CaddyCurve is the group as Caddy 2.6 names it in curves: x25519, secp256r1, secp384r1. A group
// it lacks stops the render with an error naming it: Caddy 2.6 would start, take the unknown
// name as no group at all and fail every handshake, saying nothing of why.
func (v TLSVars) CaddyCurve() (string, error) {
	g, ok := LookupTLSGroup(v.Group)
	if !ok || g.Caddy == "" {
		return "", fmt.Errorf("TLS group %s: Caddy 2.6 (built with Go 1.19) has no such group", v.Group)
	}
	return g.Caddy, nil
}

// TraefikCurve is the group as Traefik names it in curvePreferences: X25519, X25519MLKEM768,
// CurveP256, CurveP384; another is an error naming it.
func (v TLSVars) TraefikCurve() (string, error) {
	g, ok := LookupTLSGroup(v.Group)
	if !ok || g.Traefik == "" {
		return "", fmt.Errorf("TLS group %s: Traefik has no name for it", v.Group)
	}
	return g.Traefik, nil
}

// OpenSSLConfText is the OpenSSL configuration of a profile: every SSL_CTX a program makes gets
// these settings (system_default) unless the program sets its own.
func (v TLSVars) OpenSSLConfText() string {
	tickets := ""
	if !v.Resumption {
		// no stateless tickets (NoTicket) and, in TLS 1.3, no stateful ones either
		tickets = "Options = NoTicket\nNumTickets = 0\n"
	}
	return fmt.Sprintf(`# written by proxybench from the TLS profile %q (targets.json tls_profiles)
openssl_conf = proxybench_init

[proxybench_init]
ssl_conf = proxybench_ssl

[proxybench_ssl]
system_default = proxybench_tls

[proxybench_tls]
MinProtocol = %s
MaxProtocol = %s
Groups = %s
Ciphersuites = %s
%s`, v.Profile, v.OpenSSLVersion, v.OpenSSLVersion, v.Group, v.Cipher, tickets)
}

// ConfigFile is where the rendered config lands: the template's name without .tmpl.
func (d *Definition) ConfigFile(runDir string) string {
	return filepath.Join(runDir, strings.TrimSuffix(d.Config, ".tmpl"))
}

// Render writes the proxy's config from its template.
func (d *Definition) Render(v Vars) error {
	tmplPath := filepath.Join(d.Dir, d.Config)
	t, err := template.New(filepath.Base(d.Config)).Option("missingkey=error").ParseFiles(tmplPath)
	if err != nil {
		return fmt.Errorf("target %s: parse config template %s", d.Name, templateError(tmplPath, err))
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return fmt.Errorf("target %s: render config template %s", d.Name, templateError(tmplPath, err))
	}
	return os.WriteFile(v.ConfigFile, buf.Bytes(), 0o644)
}

// templateError says a text/template error with the template's path where the package gives
// its base name alone ("template: nginx.conf.tmpl:12: …" becomes "proxies/nginx/nginx.conf.tmpl:12: …"),
// so that the file at fault is named whichever proxy it is; a field Vars lacks gets the list
// of those it has.
func templateError(path string, err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "template: "+filepath.Base(path)+":"); ok {
		msg = path + ":" + rest
	} else {
		msg = path + ": " + strings.TrimPrefix(msg, "template: ")
	}
	if strings.Contains(msg, "can't evaluate field") {
		msg += "; the fields are " + strings.Join(varsFields(reflect.TypeFor[Vars](), "."), ", ") + " (stack/README.md)"
	}
	return msg
}

// varsFields are the fields and methods of t a template may use, as it spells them: .Name, .TLS.Group, …
func varsFields(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			out = append(out, varsFields(f.Type, prefix+f.Name+".")...)
			continue
		}
		out = append(out, prefix+f.Name)
	}
	for i := range t.NumMethod() {
		out = append(out, prefix+t.Method(i).Name) // .TLS.CaddyCurve, …
	}
	return out
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

// installAsked is the first InstallEnv variable set, as NAME=value; "" when none is.
func (d *Definition) installAsked() string {
	for _, k := range d.InstallEnv {
		if v := os.Getenv(k); v != "" {
			return k + "=" + v
		}
	}
	return ""
}

// BinarySHA256 is the sha256 (hex) of the program that runs: BinaryFile's, or Command[0]'s,
// links followed, so that a figure names the exact build that produced it.
func (d *Definition) BinarySHA256(cacheBin string) (string, error) {
	name := d.BinaryFile
	if name == "" {
		name = d.Command[0]
	}
	p, err := LookBinary(name, cacheBin)
	if err != nil {
		return "", err
	}
	return FileSHA256(p)
}

// FileSHA256 is the sha256 (hex) of a file's content, links followed.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("sha256 of %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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
