package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Paths are where the stack finds its parts and keeps its state.
type Paths struct {
	Root        string // the project: proxies/, bin/
	TargetsFile string // targets.json
	RunDir      string // state of a running stack: certs, configs, logs, pids
	CacheDir    string // installed proxies, outside the clone
	Proxies     string // one folder per proxy; empty: Root/proxies
}

// CacheDir is the install cache outside the clone: $PROXYBENCH_CACHE, or ~/.cache/proxybench.
// The Makefile's install scripts use the same default.
func CacheDir() (string, error) {
	if c := os.Getenv("PROXYBENCH_CACHE"); c != "" {
		return c, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("set PROXYBENCH_CACHE: no home directory for the default cache")
	}
	return filepath.Join(home, ".cache", "proxybench"), nil
}

// CacheBin is where install scripts put binaries that are not on PATH.
func (p Paths) CacheBin() string { return filepath.Join(p.CacheDir, "bin") }

// ProxiesDir holds one folder per proxy.
func (p Paths) ProxiesDir() string {
	if p.Proxies != "" {
		return p.Proxies
	}
	return filepath.Join(p.Root, "proxies")
}

// UpstreamBin is the upstream the Makefile builds.
func (p Paths) UpstreamBin() string { return filepath.Join(p.Root, "bin", "upstream") }

func (p Paths) statePath() string { return filepath.Join(p.RunDir, "state.json") }

// Stack is the native engine: it brings targets up on loopback (or the address ListenOn
// gives) and down again by pid.
type Stack struct {
	Paths
	Config *Config
	Out    io.Writer // one progress line per step

	// ReadyTimeout bounds how long a target may take to answer its first verified request.
	ReadyTimeout time.Duration
	// Pin, when set, starts the upstream and the proxies on their CPU sets (Up records it in
	// the state, so that the client of a later run is pinned alike).
	Pin *Pinning
	// KeepGoing (TARGETS=all): a proxy that fails to install, or to start and answer as it
	// claims, is recorded in the state with why ("install failed: …", "not verified: …") and
	// the others go on. Off (targets the user named), such a failure is an error at once.
	KeepGoing bool

	// net is where targets listen and find the upstream: Exec's (UseNetwork), Up's
	// (ListenOn); the zero value is the config's address for both, as under compose.yaml's
	// host networking.
	net Network

	// starting is the state Up is building: each process is written into it the moment it
	// starts, not once all are ready, so that a controller killed meanwhile (kill -9) leaves a
	// state from which `make down` stops every process it started.
	starting *State
}

// New loads the targets file; tlsProfile (TLS_PROFILE), when given, picks the TLS profile
// instead of its tls_profile.
func New(p Paths, tlsProfile string, out io.Writer) (*Stack, error) {
	c, err := LoadConfig(p.TargetsFile)
	if err != nil {
		return nil, err
	}
	if name := tlsProfile; name != "" {
		if err := c.UseTLSProfile(name); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", TLSProfileEnv, name, err)
		}
	}
	return &Stack{Paths: p, Config: c, Out: out, ReadyTimeout: 20 * time.Second}, nil
}

// Running is a target the stack started.
type Running struct {
	Process
	Version string `json:"version"`
	// SHA256 is the running program's (Definition.BinarySHA256; the upstream's for direct).
	SHA256    string     `json:"sha256,omitempty"`
	Ports     Ports      `json:"ports"`
	Protocols []Protocol `json:"protocols"`
	// TLS is what each TLS protocol (h1, h2, h3) negotiated when the target was verified.
	TLS map[Protocol]*Negotiated `json:"tls,omitempty"`
	// TLSDifferences are the target definition's: what it negotiates against the profile
	// whatever its config says, with why (Definition.TLSDifferences).
	TLSDifferences map[Protocol]map[string]string `json:"tls_differences,omitempty"`
	// MaxStreams is how many concurrent streams one connection of each of h2 and h3 offered
	// when the target started (Prober.OfferedStreams: UnlimitedStreams for no limit,
	// StreamsProbeCap for at least that many); a protocol whose value could not be read is
	// left out. Kept out of TLS: that is what the TLS profile is checked against.
	MaxStreams map[Protocol]int `json:"max_streams,omitempty"`
}

// State is run/state.json: what is up, so that down stops exactly that.
type State struct {
	Started time.Time `json:"started"`
	// Engine is empty for a stack `make up` started, EngineCompose for one Attach adopted.
	Engine string `json:"engine,omitempty"`
	// Pin is the CPU layout the stack was started with; nil: none.
	Pin *Pinning `json:"pinning,omitempty"`
	// Listen is the IP address every target and the upstream listen on: targets.json's
	// loopback address, or STACK_LISTEN's (ListenOn). A load host on another machine sends
	// its load there (GET /v1/state of the agent).
	Listen string `json:"listen"`
	// CPUs are the CPUs `make up` could run on (runtime.NumCPU): the stack host's, which a
	// load host's report shows beside its own (GET /v1/state of the agent). 0: not recorded.
	CPUs int `json:"cpus,omitempty"`
	// TLSProfile is the TLS profile every target was verified against at start, and TLS its
	// settings then: what status checks and a restart renders, whatever targets.json or
	// TLS_PROFILE say now. Empty for a stack compose started.
	TLSProfile string              `json:"tls_profile,omitempty"`
	TLS        *TLSProfile         `json:"tls,omitempty"`
	Targets    map[string]*Running `json:"targets"`
	// Missing are the targets asked for that are not up, with why (Label: "not installed: how
	// to add it", "install failed: …", "not verified: …"): every table shows them as such
	// instead of leaving them out.
	Missing map[string]string `json:"missing,omitempty"`
}

// Negotiated is what each up target's TLS protocols negotiated when it was verified, by target
// (targets without TLS left out).
func (st *State) Negotiated() map[string]map[Protocol]*Negotiated {
	out := map[string]map[Protocol]*Negotiated{}
	for n, r := range st.Targets {
		if len(r.TLS) > 0 {
			out[n] = r.TLS
		}
	}
	return out
}

// LoadState reads the running stack's state; a missing file is an empty state.
func (s *Stack) LoadState() (*State, error) {
	st := &State{Targets: map[string]*Running{}}
	data, err := os.ReadFile(s.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read stack state: %w", err)
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("parse %s: %w (remove it if no stack is running)", s.statePath(), err)
	}
	if st.Listen == "" {
		st.Listen = s.Config.Address // a state written before it was recorded
	}
	return st, nil
}

// saveState replaces state.json whole (a new file renamed over it): a controller killed while
// writing must not leave a truncated state that `down` cannot read.
func (s *Stack) saveState(st *State) error {
	return WriteJSON(s.statePath(), st)
}

// Definitions loads the folders of the named targets (direct has none: it is the upstream).
func (s *Stack) Definitions(names []string) (map[string]*Definition, error) {
	defs := map[string]*Definition{}
	var errs []error
	for _, n := range names {
		if n == Direct {
			continue
		}
		d, err := LoadDefinition(s.ProxiesDir(), n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defs[n] = d
	}
	return defs, errors.Join(errs...)
}

func (s *Stack) vars(name string, certs Certs, runDir string, def *Definition) Vars {
	p := s.Config.Targets[name]
	v := Vars{
		Name:         name,
		Host:         s.Config.Hostname,
		Addr:         s.listenAddr(),
		TLSPort:      p.TLS,
		H1CPort:      p.H1C,
		AdminPort:    p.Admin,
		UpstreamAddr: net.JoinHostPort(s.upstreamHost(), strconv.Itoa(s.Config.Upstream.H1C)),
		UpstreamHost: s.upstreamHost(),
		UpstreamPort: s.Config.Upstream.H1C,
		CertFile:     certs.CertFile,
		KeyFile:      certs.KeyFile,
		CAFile:       certs.CAFile,
		RunDir:       runDir,
		Workers:      s.Config.Workers,
		Keepalive:    s.Config.UpstreamKeepalive,
		UploadLimit:  s.Config.UploadLimit,
		QUICRcvBuf:   QUICReceiveBuffer,
	}
	// getrlimit(RLIMIT_NOFILE) has no failure on Linux but a bad pointer
	of, _ := OpenFilesLimit()
	v.MaxConnections, v.OpenFiles = of.MaxConnections(), of.Soft
	profile, tlsProfile := s.Config.TLS()
	v.TLS = NewTLSVars(profile, tlsProfile, filepath.Join(runDir, openSSLConfName))
	if def != nil {
		v.ConfigFile = def.ConfigFile(runDir)
	}
	return v
}

func (s *Stack) logf(format string, args ...any) {
	if s.Out != nil {
		fmt.Fprintf(s.Out, format+"\n", args...)
	}
}

// Up starts the upstream and the named proxies, and returns once every one of them answers a
// verified request over each of its protocols. On any failure it stops what it started.
func (s *Stack) Up(ctx context.Context, names []string) (err error) {
	old, err := s.LoadState()
	if err != nil {
		return err
	}
	for _, n := range old.Names() {
		if !old.IsUp(n) {
			continue
		}
		if old.Engine == EngineCompose {
			return fmt.Errorf("a docker compose stack is up (%s): run `make compose-down` first", n)
		}
		return fmt.Errorf("a stack is already up (%s, pid %d): run `make down` first", n, old.Targets[n].PID)
	}
	defs, err := s.Definitions(names)
	if err != nil {
		return err
	}
	missing, err := s.Install(ctx, defs)
	if err != nil {
		return err
	}
	names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return missing[n] != "" })
	if _, err := os.Stat(s.UpstreamBin()); err != nil {
		return fmt.Errorf("target direct: %s is missing: run `make setup`", s.UpstreamBin())
	}
	if err := s.checkPorts(names, defs); err != nil {
		return err
	}
	if err := os.MkdirAll(s.RunDir, 0o755); err != nil {
		return err
	}
	certs, err := EnsureCerts(filepath.Join(s.RunDir, "certs"), s.Config.Hostname, s.listenAddr())
	if err != nil {
		return err
	}
	prober, err := NewProber(s.Config.Hostname, s.listenAddr(), certs.CAFile)
	if err != nil {
		return err
	}

	st := &State{Started: time.Now(), Targets: map[string]*Running{}, Missing: missing, Pin: s.Pin, Listen: s.listenAddr(), CPUs: runtime.NumCPU()}
	profile, tlsProfile := s.Config.TLS()
	st.TLSProfile, st.TLS = profile, &tlsProfile
	s.starting = st
	defer func() { s.starting = nil }()
	s.logf("TLS profile %s: TLS %s, %s, %s, %s", profile, tlsProfile.Version, tlsProfile.Group, tlsProfile.Cipher, resumptionWord(tlsProfile.Resumption))
	defer func() {
		if err != nil {
			// on an interrupt too: the state then says nothing runs, as is the case
			if stopErr := s.stopAll(st); stopErr == nil {
				clear(st.Targets)
				_ = s.saveState(st)
			}
			return
		}
		err = s.saveState(st)
	}()

	// The upstream is always up: every proxy forwards to it, and it is the direct target.
	up, err := s.startTarget(ctx, Direct, nil, certs, prober)
	if err != nil {
		return err
	}
	st.Targets[Direct] = up
	for _, n := range names {
		if n == Direct {
			continue
		}
		r, err := s.startTarget(ctx, n, defs[n], certs, prober)
		if err != nil && s.KeepGoing && ctx.Err() == nil {
			// stopped by start already: recorded, and the others still start
			st.Missing[n] = LabelNotVerified + ": " + FirstLine(err.Error())
			s.logf("%-8s %s (the other targets go on)\n%s", n, LabelNotVerified, err)
			continue
		}
		if err != nil {
			return err
		}
		st.Targets[n] = r
	}
	return nil
}

// recordStarting writes a process Up has just started (or, r nil, stopped again) into the state
// on disk; outside Up it does nothing.
func (s *Stack) recordStarting(name string, r *Running) {
	if s.starting == nil {
		return
	}
	if r == nil {
		delete(s.starting.Targets, name)
	} else {
		s.starting.Targets[name] = r
	}
	if err := s.saveState(s.starting); err != nil {
		s.logf("%-8s could not record its pid in %s: %v (make down may miss it)", name, s.statePath(), err)
	}
}

// FirstLine is the first line of s, trimmed: the reason of an error whose details follow it.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

// Restart stops one target of the running stack and starts it again, verified as at Up, so
// that no state of one measurement (connection pools, caches, heap, a kernel's socket backlog
// of the process) is carried into the next. The new process replaces the old in the state.
func (s *Stack) Restart(ctx context.Context, name string) (*Running, error) {
	st, err := s.LoadState()
	if err != nil {
		return nil, err
	}
	old, ok := st.Targets[name]
	switch {
	case st.Engine == EngineCompose:
		return nil, fmt.Errorf("target %s was started by docker compose: restart it with `docker compose restart %s`", name, name)
	case !ok:
		return nil, fmt.Errorf("target %s is not up", name)
	}
	// as the rest of the stack was started and verified: its TLS profile, its address
	if st.TLS != nil {
		s.Config.useTLS(st.TLSProfile, *st.TLS)
	}
	s.net = Network{Listen: st.Listen, Upstream: st.Listen}
	defs, err := s.Definitions([]string{name})
	if err != nil {
		return nil, err
	}
	certs := CertsIn(filepath.Join(s.RunDir, "certs"))
	prober, err := NewProber(s.Config.Hostname, s.listenAddr(), certs.CAFile)
	if err != nil {
		return nil, err
	}
	if err := old.Stop(10 * time.Second); err != nil {
		return nil, fmt.Errorf("restart target %s: %w", name, err)
	}
	r, err := s.startTarget(ctx, name, defs[name], certs, prober)
	if err != nil {
		// down, and said so: the state must not claim the old process
		delete(st.Targets, name)
		return nil, errors.Join(err, s.saveState(st))
	}
	st.Targets[name] = r
	return r, s.saveState(st)
}

// checkPorts fails, naming every port taken, before anything starts: TCP for the TLS, cleartext
// and admin ports, and UDP for the TLS port of each target that serves h3.
func (s *Stack) checkPorts(names []string, defs map[string]*Definition) error {
	var errs []error
	seen := map[int]bool{}
	seenUDP := map[int]bool{}
	for _, n := range append([]string{Direct}, names...) {
		p := s.Config.Targets[n]
		for _, port := range p.TCP() {
			if seen[port.Port] {
				continue
			}
			seen[port.Port] = true
			if err := CheckPortFree(s.listenAddr(), port.Port); err != nil {
				errs = append(errs, fmt.Errorf("target %s: %w", n, err))
			}
		}
		if !slices.Contains(s.protocols(n, defs[n]), H3) || seenUDP[p.TLS] {
			continue
		}
		seenUDP[p.TLS] = true
		if err := CheckUDPPortFree(s.listenAddr(), p.TLS); err != nil {
			errs = append(errs, fmt.Errorf("target %s (h3): %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// upstreamProtocols are the direct target's: the upstream serves every protocol of the matrix.
var upstreamProtocols = []Protocol{H1, H1C, H2, H3}

// protocols are what a target serves: the upstream's for direct, else its definition's (checked
// by LoadDefinition).
func (s *Stack) protocols(name string, def *Definition) []Protocol {
	if name == Direct {
		return upstreamProtocols
	}
	if def == nil {
		return nil
	}
	out := make([]Protocol, 0, len(def.Protocols))
	for _, p := range def.Protocols {
		out = append(out, Protocol(p))
	}
	return out
}

// command is how a target runs: its argv and environment, and its own directory under runDir
// with its rendered config in it. Both engines run exactly this: `make up` as a child process,
// compose as the container's process (Exec).
type command struct {
	argv, env []string
	dir       string
	running   *Running // ports, protocols and version; no process yet
}

func (s *Stack) command(name string, def *Definition, certs Certs) (*command, error) {
	dir := filepath.Join(s.RunDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := s.Config.Targets[name]
	if name == Direct {
		_, profile := s.Config.TLS()
		argv := []string{
			s.UpstreamBin(),
			"-h1c", net.JoinHostPort(s.listenAddr(), strconv.Itoa(p.H1C)),
			"-tls", net.JoinHostPort(s.listenAddr(), strconv.Itoa(p.TLS)),
			"-cert", certs.CertFile, "-key", certs.KeyFile,
			"-upload-limit", strconv.FormatInt(s.Config.UploadLimit, 10),
			// the TLS profile; its cipher is Go's own choice (no setting), verified at start
			"-tls-min-version", profile.Version,
			"-tls-group", profile.Group,
			"-tls-tickets=" + strconv.FormatBool(profile.Resumption),
			"-udp-rcvbuf", strconv.Itoa(QUICReceiveBuffer),
		}
		sum, _ := FileSHA256(s.UpstreamBin()) // built by make: started below or said missing there
		r := &Running{Ports: p, Protocols: s.protocols(Direct, nil), Version: upstreamVersion(s.UpstreamBin()), SHA256: sum}
		return &command{argv: argv, env: os.Environ(), dir: dir, running: r}, nil
	}
	v := s.vars(name, certs, dir, def)
	if def.AdminPort && p.Admin == 0 {
		return nil, fmt.Errorf("target %s: targets.%s in %s has no \"admin\" port, and %s cannot run without a control port of its own: add one (\"admin\": a free port)", name, name, s.TargetsFile, name)
	}
	if err := def.Render(v); err != nil {
		return nil, err
	}
	// for a proxy that takes the profile from OpenSSL's configuration (OPENSSL_CONF)
	if err := os.WriteFile(v.TLS.OpenSSLConf, []byte(v.TLS.OpenSSLConfText()), 0o644); err != nil {
		return nil, err
	}
	argv, err := def.Argv(v, s.CacheBin())
	if err != nil {
		return nil, err
	}
	env, err := def.Environ(v)
	if err != nil {
		return nil, err
	}
	sum, err := def.BinarySHA256(s.CacheBin())
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	r := &Running{Ports: p, Protocols: s.protocols(name, def), Version: s.Version(def, v), SHA256: sum, TLSDifferences: def.TLSDifferences}
	return &command{argv: argv, env: env, dir: dir, running: r}, nil
}

// startTarget starts a target as a child process and waits until it answers over every
// protocol it serves.
func (s *Stack) startTarget(ctx context.Context, name string, def *Definition, certs Certs, prober *Prober) (*Running, error) {
	c, err := s.command(name, def, certs)
	if err != nil {
		return nil, err
	}
	role := RoleProxy
	if name == Direct {
		role = RoleUpstream // alone, it is the target measured; behind a proxy, the upstream
	}
	return c.running, s.start(ctx, name, c.running, s.Pin.Wrap(role, c.argv), c.env, c.dir, prober)
}

func (s *Stack) start(ctx context.Context, name string, r *Running, argv, env []string, runDir string, prober *Prober) error {
	logPath := filepath.Join(runDir, name+".log")
	_ = os.Remove(logPath)
	p, err := StartProcess(argv, env, runDir, logPath)
	if err != nil {
		return fmt.Errorf("target %s: %w", name, err)
	}
	r.Process = *p
	s.recordStarting(name, r)
	t0 := time.Now()
	err = s.waitReady(ctx, name, r, prober)
	if err == nil {
		err = s.verifyServing(ctx, name, r, prober)
	}
	if err != nil {
		// Not up means not left running either: Up only stops what made it into the state.
		if stopErr := r.Stop(10 * time.Second); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		s.recordStarting(name, nil)
		return err
	}
	s.logf("%-8s up   pid %-7d %-22s ready in %v%s%s", name, r.PID, r.Version, time.Since(t0).Round(time.Millisecond), tlsSummary(r.TLS), streamsSummary(r.MaxStreams))
	return nil
}

// verifyServing holds a target that answers (verified, over every protocol) to what makes it
// up, whoever started it: the TLS profile negotiated (verifyTLS), and the streams it offers
// read (readStreams).
func (s *Stack) verifyServing(ctx context.Context, name string, r *Running, prober *Prober) error {
	if err := s.verifyTLS(ctx, name, r, prober); err != nil {
		return err
	}
	s.readStreams(ctx, name, r, prober)
	return nil
}

// tlsTimeout bounds one protocol's TLS check: two connections that have just been answering.
const tlsTimeout = 10 * time.Second

// verifyTLS checks that every TLS protocol of the target (h1, h2, h3) negotiates the TLS
// profile and records what each negotiated in r.TLS. A target that does not is not up: the
// first line of the error names the protocol, the parameter, what was negotiated and what
// the profile wants.
func (s *Stack) verifyTLS(ctx context.Context, name string, r *Running, prober *Prober) error {
	profile, want := s.Config.TLS()
	r.TLS = map[Protocol]*Negotiated{}
	var errs []error
	for _, proto := range r.Protocols {
		pctx, cancel := context.WithTimeout(ctx, tlsTimeout)
		got, err := prober.CheckTLS(pctx, proto, proto.Port(r.Ports), profile, want, r.TLSDifferences[proto])
		cancel()
		if got != nil {
			r.TLS[proto] = got
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("target %s does not negotiate the TLS profile: %w", name, err)
	}
	return nil
}

// tlsSummary is what the TLS protocols negotiated, for the up line: one description when they
// all agree, else one per protocol.
func tlsSummary(got map[Protocol]*Negotiated) string {
	var parts []string
	seen := map[string]bool{}
	for _, p := range Protocols {
		if n := got[p]; n != nil {
			parts = append(parts, string(p)+": "+n.String())
			seen[n.String()] = true
		}
	}
	switch {
	case len(parts) == 0:
		return ""
	case len(seen) == 1:
		for d := range seen {
			return "  " + d
		}
	}
	return "  " + strings.Join(parts, "; ")
}

func resumptionWord(on bool) string {
	if on {
		return "resumption"
	}
	return "no resumption"
}

// waitReady waits until every protocol of the target passes a verified probe (h3 included:
// a target that lists h3 is not up until it answers over QUIC), or says why it never did.
func (s *Stack) waitReady(ctx context.Context, name string, r *Running, prober *Prober) error {
	err := s.waitServing(ctx, r, prober, r.Exited())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errExited):
		return fmt.Errorf("target %s exited during start-up (command: %v)\nlast lines of %s:\n%s",
			name, r.Argv, r.Log, Tail(r.Log, 20))
	default:
		return fmt.Errorf("target %s did not answer a verified request: %w\nlast lines of %s:\n%s",
			name, err, r.Log, Tail(r.Log, 20))
	}
}

// Down stops exactly what Up started, proxies first and the upstream last. A stack docker
// compose started is compose's to stop: Down only forgets it, once it is down.
func (s *Stack) Down() error {
	st, err := s.LoadState()
	if err != nil {
		return err
	}
	if len(st.Targets) == 0 {
		s.logf("nothing to stop: no stack is up")
		return nil
	}
	if st.Engine == EngineCompose {
		for _, n := range st.Names() {
			if r := st.Targets[n]; r.PID != 0 && r.Alive() {
				return fmt.Errorf("target %s (pid %d) was started by docker compose: stop the stack with `make compose-down`", n, r.PID)
			}
		}
		s.logf("compose stack forgotten (its containers are down)")
		return os.Remove(s.statePath())
	}
	if err := s.stopAll(st); err != nil {
		return err
	}
	return os.Remove(s.statePath())
}

// Failures are the targets asked for that failed to install or to be verified, sorted, each
// with why: "haproxy (install failed: …)".
func (st *State) Failures() []string { return Failures(st.Missing) }

// Failures are the targets of unavailable (name → why it is not up) that failed, as
// State.Failures says them.
func Failures(unavailable map[string]string) []string {
	var out []string
	for n, why := range unavailable {
		if Failed(why) {
			out = append(out, fmt.Sprintf("%s (%s)", n, why))
		}
	}
	slices.Sort(out)
	return out
}

// Names are the state's targets, sorted.
func (st *State) Names() []string {
	names := make([]string, 0, len(st.Targets))
	for n := range st.Targets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (s *Stack) stopAll(st *State) error {
	var errs []error
	stop := func(n string, r *Running) {
		if err := r.Stop(10 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("target %s: %w", n, err))
			return
		}
		s.logf("%-8s down (pid %d)", n, r.PID)
	}
	for n, r := range st.Targets {
		if n != Direct {
			stop(n, r)
		}
	}
	if r, ok := st.Targets[Direct]; ok {
		stop(Direct, r)
	}
	return errors.Join(errs...)
}
