// Package stack runs the benchmark stack natively: the upstream, the proxies and their
// certificates, all on loopback, started and stopped by pid.
package stack

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
)

// Direct is the target that is the upstream itself: the no-proxy baseline.
const Direct = "direct"

// Ports are one target's listeners.
type Ports struct {
	TLS int `json:"tls"`
	H1C int `json:"h1c"`
	// Admin is a control port a proxy cannot run without (GoDoxy's API), on the stack's
	// address like the others, so that nothing of the stack listens where targets.json does not
	// say; 0: the target has none.
	Admin int `json:"admin,omitempty"`
}

// Offset moves every port of p by n (a second stack beside the first: the tests').
func (p Ports) Offset(n int) Ports {
	out := Ports{TLS: p.TLS + n, H1C: p.H1C + n}
	if p.Admin != 0 {
		out.Admin = p.Admin + n
	}
	return out
}

// TCP are the target's TCP ports by their targets.json key, admin only when it has one.
func (p Ports) TCP() []NamedPort {
	out := []NamedPort{{"tls", p.TLS}, {"h1c", p.H1C}}
	if p.Admin != 0 {
		out = append(out, NamedPort{"admin", p.Admin})
	}
	return out
}

// NamedPort is a port with its targets.json key.
type NamedPort struct {
	Kind string
	Port int
}

// Config is targets.json: the one source of truth for hostnames, ports and shared tuning that
// the stack, the scenarios and compose.yaml all read.
type Config struct {
	Hostname          string           `json:"hostname"`
	Address           string           `json:"address"`
	Workers           int              `json:"workers"`
	UpstreamKeepalive int              `json:"upstream_keepalive"`
	UploadLimit       int64            `json:"upload_limit_bytes"`
	Upstream          Ports            `json:"upstream"`
	Targets           map[string]Ports `json:"targets"`
	// TLSProfile names the entry of TLSProfiles that every target serves and is verified
	// against at up; TLS_PROFILE overrides it (UseTLSProfile).
	TLSProfile  string                `json:"tls_profile"`
	TLSProfiles map[string]TLSProfile `json:"tls_profiles"`
}

// TLSProfile is what every target must negotiate with a default Go client (k6), over TCP and
// QUIC alike, so that a handshake costs the same work whichever target is measured.
type TLSProfile struct {
	// Version is the one TLS version: "1.3" (QUIC has no other, and TLS 1.2 would need a
	// cipher per key type).
	Version string `json:"version"`
	// Group is the key exchange, as OpenSSL and BoringSSL spell it (TLSGroups).
	Group string `json:"group"`
	// Cipher is the TLS 1.3 cipher suite, IANA's name (Go, OpenSSL and HAProxy spell it so).
	Cipher string `json:"cipher"`
	// Resumption must be false: no session tickets, no session cache, so that every fresh
	// connection is a full handshake on every target.
	Resumption bool `json:"resumption"`
}

// TLSGroup is a key exchange a profile may ask for, with each library's name for it.
type TLSGroup struct {
	Name    string      // the profile's spelling: OpenSSL's and BoringSSL's (Envoy's) name
	ID      tls.CurveID // Go's, and what a handshake reports (ConnectionState.CurveID)
	Caddy   string      // Caddy 2.6's `curves` name; "" where Caddy 2.6 (Go 1.19) lacks it
	Traefik string      // Traefik's curvePreferences name
}

// TLSGroups are the groups a profile may name: those a default Go client offers.
var TLSGroups = []TLSGroup{
	{Name: "X25519", ID: tls.X25519, Caddy: "x25519", Traefik: "X25519"},
	{Name: "X25519MLKEM768", ID: tls.X25519MLKEM768, Traefik: "X25519MLKEM768"},
	{Name: "P-256", ID: tls.CurveP256, Caddy: "secp256r1", Traefik: "CurveP256"},
	{Name: "P-384", ID: tls.CurveP384, Caddy: "secp384r1", Traefik: "CurveP384"},
}

// LookupTLSGroup finds a group by the profile's name for it.
func LookupTLSGroup(name string) (TLSGroup, bool) {
	i := slices.IndexFunc(TLSGroups, func(g TLSGroup) bool { return g.Name == name })
	if i < 0 {
		return TLSGroup{}, false
	}
	return TLSGroups[i], true
}

// GroupName is how a negotiated group is said: the profile's name, or Go's for another.
func GroupName(id tls.CurveID) string {
	i := slices.IndexFunc(TLSGroups, func(g TLSGroup) bool { return g.ID == id })
	if i < 0 {
		return id.String()
	}
	return TLSGroups[i].Name
}

// tls13Ciphers are the TLS 1.3 cipher suites by name (Go's names are IANA's).
func tls13Ciphers() map[string]uint16 {
	out := map[string]uint16{}
	for _, c := range tls.CipherSuites() {
		if slices.Equal(c.SupportedVersions, []uint16{tls.VersionTLS13}) {
			out[c.Name] = c.ID
		}
	}
	return out
}

// CipherID is the cipher suite's number, and whether it is a TLS 1.3 suite.
func CipherID(name string) (uint16, bool) {
	id, ok := tls13Ciphers()[name]
	return id, ok
}

func (p TLSProfile) validate(field string) error {
	var errs []error
	if p.Version != "1.3" {
		errs = append(errs, fmt.Errorf(`%s.version is %q: the one valid version is "1.3" (QUIC speaks no other)`, field, p.Version))
	}
	if _, ok := LookupTLSGroup(p.Group); !ok {
		names := make([]string, len(TLSGroups))
		for i, g := range TLSGroups {
			names[i] = g.Name
		}
		errs = append(errs, fmt.Errorf("%s.group is %q: valid groups are %s", field, p.Group, strings.Join(names, ", ")))
	}
	if _, ok := CipherID(p.Cipher); !ok {
		errs = append(errs, fmt.Errorf("%s.cipher is %q: valid TLS 1.3 cipher suites are %s", field, p.Cipher, strings.Join(slices.Sorted(maps.Keys(tls13Ciphers())), ", ")))
	}
	if p.Resumption {
		errs = append(errs, fmt.Errorf("%s.resumption is true: only false is valid (every fresh connection must be a full handshake on every target)", field))
	}
	return errors.Join(errs...)
}

// TLS is the profile in use (tls_profile, or TLS_PROFILE's), with its name.
func (c *Config) TLS() (string, TLSProfile) {
	return c.TLSProfile, c.TLSProfiles[c.TLSProfile]
}

// UseTLSProfile selects another profile of the file (TLS_PROFILE=pq make up): one setting for
// every target alike.
func (c *Config) UseTLSProfile(name string) error {
	if _, ok := c.TLSProfiles[name]; !ok {
		return fmt.Errorf("TLS profile %q is not in tls_profiles: valid profiles are %s", name, strings.Join(slices.Sorted(maps.Keys(c.TLSProfiles)), ", "))
	}
	c.TLSProfile = name
	return nil
}

// useTLS makes the profile name, with settings p, the one in use: a running stack's, from its
// state, even if targets.json has changed it since.
func (c *Config) useTLS(name string, p TLSProfile) {
	profiles := make(map[string]TLSProfile, len(c.TLSProfiles)+1)
	for k, v := range c.TLSProfiles {
		profiles[k] = v
	}
	profiles[name] = p
	c.TLSProfiles, c.TLSProfile = profiles, name
}

// TLSProfileEnv names the environment variable that picks another profile than tls_profile.
const TLSProfileEnv = "TLS_PROFILE"

// LoadConfig reads and validates a targets file. Unknown keys are errors, so a typo never
// silently falls back to a default.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read targets file: %w", err)
	}
	var c Config
	if err := DecodeJSON(path, data, &c, true); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

func (c *Config) validate() error {
	var errs []error
	if c.Hostname == "" {
		errs = append(errs, errors.New(`"hostname" is empty`))
	}
	if c.Address != "127.0.0.1" && c.Address != "::1" {
		errs = append(errs, fmt.Errorf(`"address" is %q: load goes to loopback only (127.0.0.1 or ::1)`, c.Address))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf(`"workers" is %d: it must be at least 1`, c.Workers))
	}
	if c.UpstreamKeepalive < 1 {
		errs = append(errs, fmt.Errorf(`"upstream_keepalive" is %d: it must be at least 1`, c.UpstreamKeepalive))
	}
	if c.UploadLimit < 1 {
		errs = append(errs, fmt.Errorf(`"upload_limit_bytes" is %d: it must be at least 1`, c.UploadLimit))
	}
	if len(c.TLSProfiles) == 0 {
		errs = append(errs, errors.New(`"tls_profiles" is empty: define at least one TLS profile (version, group, cipher, resumption)`))
	}
	for _, name := range slices.Sorted(maps.Keys(c.TLSProfiles)) {
		if err := c.TLSProfiles[name].validate("tls_profiles." + name); err != nil {
			errs = append(errs, err)
		}
	}
	if _, ok := c.TLSProfiles[c.TLSProfile]; !ok && len(c.TLSProfiles) > 0 {
		errs = append(errs, fmt.Errorf(`"tls_profile" is %q: valid profiles are %s (tls_profiles)`, c.TLSProfile, strings.Join(slices.Sorted(maps.Keys(c.TLSProfiles)), ", ")))
	}
	d, ok := c.Targets[Direct]
	if !ok {
		errs = append(errs, fmt.Errorf(`"targets" has no %q entry (the upstream as the no-proxy baseline)`, Direct))
	} else if d.H1C != c.Upstream.H1C {
		errs = append(errs, fmt.Errorf(`targets.direct.h1c is %d but upstream.h1c is %d: direct is the upstream, they must match`, d.H1C, c.Upstream.H1C))
	}
	owner := map[int]string{}
	for _, name := range c.Names() {
		p := c.Targets[name]
		for _, port := range p.TCP() {
			if port.Port < 1 || port.Port > 65535 {
				errs = append(errs, fmt.Errorf("targets.%s.%s is %d: not a port", name, port.Kind, port.Port))
				continue
			}
			if prev, dup := owner[port.Port]; dup {
				errs = append(errs, fmt.Errorf("targets.%s.%s: port %d is already %s's", name, port.Kind, port.Port, prev))
			}
			owner[port.Port] = name + "." + port.Kind
		}
	}
	return errors.Join(errs...)
}

// Names lists the targets, direct first and the rest sorted, so every table has one order.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Targets))
	for n := range c.Targets {
		if n != Direct {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if _, ok := c.Targets[Direct]; ok {
		names = append([]string{Direct}, names...)
	}
	return names
}

// SelectsAll tells whether a target list is "all" (or empty): every target of the file, so that
// one that fails to install or start is recorded and the others go on (Stack.KeepGoing).
func SelectsAll(spec string) bool {
	spec = strings.TrimSpace(spec)
	return spec == "" || spec == "all"
}

// Select resolves a user's target list: "all" (or empty) means every target in the file;
// otherwise a comma-separated list of names, each of which must exist.
func (c *Config) Select(spec string) ([]string, error) {
	if SelectsAll(spec) {
		return c.Names(), nil
	}
	spec = strings.TrimSpace(spec)
	valid := "valid targets are all, " + strings.Join(c.Names(), ", ")
	var out []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if n == "" || slices.Contains(out, n) {
			continue // "nginx," or "nginx,nginx": nginx, once
		}
		if n == "all" {
			return nil, fmt.Errorf("target list %q: all stands alone (every target), not in a list; %s", spec, valid)
		}
		if _, ok := c.Targets[n]; !ok {
			return nil, fmt.Errorf("unknown target %q: %s", n, valid)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("target list %q names no target: %s", spec, valid)
	}
	return out, nil
}
