package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// EngineCompose marks a state whose targets docker compose started (compose.yaml): `make k6`,
// `make status` and the resource sampler use it as they use a native stack, but its processes
// are the containers' and only compose stops them.
const EngineCompose = "compose"

// Exec is the compose engine's entry point, one container per target: it renders the target's
// config from the same template and targets.json as `make up` does, and replaces this process
// with the very command `make up` would start, so the container's process is the target itself
// (signals, exit status, logs on stdout). The certificates must already be there (`proxybench
// certs`, compose's one-shot `certs` service), since every container shares them.
func (s *Stack) Exec(name string) error {
	if _, ok := s.Config.Targets[name]; !ok {
		return fmt.Errorf("unknown target %q: targets are %s", name, strings.Join(s.Config.Names(), ", "))
	}
	var def *Definition
	if name != Direct {
		defs, err := s.Definitions([]string{name})
		if err != nil {
			return err
		}
		def = defs[name]
		if _, err := def.Binary(s.CacheBin()); err != nil {
			return fmt.Errorf("target %s: %s", name, def.NotInstalled())
		}
	}
	certs := CertsIn(filepath.Join(s.RunDir, "certs"))
	if names := append([]string{s.Config.Hostname}, s.CertIPs()...); !certs.valid(names...) {
		return fmt.Errorf("target %s: no valid certificates for %s in %s: run `proxybench certs` first (compose's certs service, with the same %s)",
			name, strings.Join(names, " and "), filepath.Dir(certs.CAFile), ListenEnv)
	}
	c, err := s.command(name, def, certs)
	if err != nil {
		return err
	}
	if name == Direct {
		// the upstream's container is up as long as the stack is (every proxy waits for it,
		// and another `up` leaves it running): its start is the stack's, and the k6 service
		// tags every run with it, so that one dashboard compares them. Without it k6 makes a
		// testid per run: worth a line, not a stack that will not start.
		if err := s.writeComposeTestID(time.Now()); err != nil {
			fmt.Fprintf(os.Stderr, "proxybench exec direct: the stack's testid is not written (each k6 run will have its own): %v\n", err)
		}
	}
	if err := os.Chdir(c.dir); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "proxybench exec %s: %s\n", name, strings.Join(c.argv, " "))
	return syscall.Exec(c.argv[0], c.argv, c.env)
}

// composeTestIDFile holds the testid of the compose stack now up (`compose-` and its start,
// UTC), which docker/k6-entrypoint.sh gives every run of the k6 service that names none, so
// that runs against several targets land in one comparison. compose.yaml mounts its directory
// (run/compose) into the direct service and the k6 service.
func (p Paths) composeTestIDFile() string { return filepath.Join(p.RunDir, "compose", "testid") }

// composeTestID is the testid of a compose stack that started at t.
func composeTestID(t time.Time) string { return "compose-" + t.UTC().Format("20060102-150405") }

func (s *Stack) writeComposeTestID(t time.Time) error {
	f := s.composeTestIDFile()
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return err
	}
	return os.WriteFile(f, []byte(composeTestID(t)+"\n"), 0o644)
}

// The settings of Exec for bridge networking (compose.bridge.yaml), where each container has a
// network namespace of its own: a target listening on 127.0.0.1 there answers nobody but its own
// healthcheck, and 127.0.0.1:9000 is not the upstream but the target itself.
const (
	// ListenEnv is the IPv4 address the target listens on (0.0.0.0: every interface of its
	// container, so that the other containers and the published ports reach it).
	ListenEnv = "PROXYBENCH_LISTEN"
	// UpstreamEnv is the upstream's host name (compose's direct service), resolved once when the
	// target starts: its address, not the name, goes into the config, as natively, since not
	// every proxy resolves a name there (Envoy's static cluster takes an address).
	UpstreamEnv = "PROXYBENCH_UPSTREAM"
)

// Network is where Exec's target listens and finds the upstream; an empty field is the config's
// (loopback) address, as natively.
type Network struct {
	Listen   string // an IPv4 address
	Upstream string // a host name or address
}

// UseNetwork makes Exec listen on n.Listen and forward to the address n.Upstream resolves to
// now (an IPv4 one when there is one: the templates write HOST:PORT). Only the compose entry
// point takes it: natively the stack stays on loopback, or on the stack host's address
// (ListenOn).
func (s *Stack) UseNetwork(ctx context.Context, n Network) error {
	listen := withoutPort(n.Listen)
	if listen != "" {
		ip := net.ParseIP(listen)
		if ip == nil || ip.To4() == nil {
			return fmt.Errorf("%s=%q: want an IPv4 address: the stack host's (STACK_LISTEN), or 0.0.0.0 for every interface of the container", ListenEnv, n.Listen)
		}
		listen = ip.String()
	}
	upstream := ""
	if host := withoutPort(n.Upstream); host != "" {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
		if err == nil && len(ips) == 0 {
			err = errors.New("no address")
		}
		if err != nil {
			return fmt.Errorf("%s=%q: cannot resolve the upstream (compose's direct service, on the same network?): %w", UpstreamEnv, n.Upstream, err)
		}
		upstream = ips[0].String()
		for _, ip := range ips {
			if ip.To4() != nil {
				upstream = ip.String()
				break
			}
		}
	}
	s.net = Network{Listen: listen, Upstream: upstream}
	return nil
}

// probeAddr is where this host reaches the targets: where they listen, or the config's address
// when they listen on every interface (a container's, under bridge networking).
func (s *Stack) probeAddr() string {
	if ip := net.ParseIP(s.listenAddr()); ip != nil && ip.IsUnspecified() {
		return s.Config.Address
	}
	return s.listenAddr()
}

// CertIPs are the addresses the leaf must name beyond loopback's: where the targets listen,
// when a load host reaches them there (STACK_LISTEN).
func (s *Stack) CertIPs() []string {
	if a := s.probeAddr(); a != s.Config.Address {
		return []string{a}
	}
	return nil
}

// listenAddr is the address targets listen on: the config's, or UseNetwork's or ListenOn's.
func (s *Stack) listenAddr() string {
	if s.net.Listen != "" {
		return s.net.Listen
	}
	return s.Config.Address
}

// upstreamHost is the address proxies forward to: the config's, or UseNetwork's or ListenOn's.
func (s *Stack) upstreamHost() string {
	if s.net.Upstream != "" {
		return s.net.Upstream
	}
	return s.Config.Address
}

// Attach adopts the named targets when another engine (docker compose) started them: each must
// answer a verified request over every protocol it serves within ReadyTimeout, as `make up`
// requires of its own. An optional target that answers nothing is recorded as missing (its
// compose profile was not started); any other that does not answer is an error. Each target's
// process is found by the socket listening on its TLS port, so the resource sampler measures
// it; Down never signals it. Each must negotiate the TLS profile, as under Up, and the
// streams it offers are read. The targets are probed where ListenOn says they listen (the stack
// host's address, STACK_LISTEN), and the state records it, so that an agent serves the stack
// to a load host as it serves a native one.
func (s *Stack) Attach(ctx context.Context, names []string) error {
	old, err := s.LoadState()
	if err != nil {
		return err
	}
	for n, r := range old.Targets {
		if old.Engine != EngineCompose && r.Alive() {
			return fmt.Errorf("a native stack is already up (%s, pid %d): run `make down` first", n, r.PID)
		}
	}
	defs, err := s.Definitions(names)
	if err != nil {
		return err
	}
	certs := CertsIn(filepath.Join(s.RunDir, "certs"))
	prober, err := NewProber(s.Config.Hostname, s.probeAddr(), certs.CAFile)
	if err != nil {
		return fmt.Errorf("%w: the compose stack writes its certificates to %s (is it up? `make compose-up`)",
			err, filepath.Dir(certs.CAFile))
	}
	st := &State{Started: time.Now(), Engine: EngineCompose, Listen: s.probeAddr(), CPUs: runtime.NumCPU(), Targets: map[string]*Running{}, Missing: map[string]string{}}
	profile, tlsProfile := s.Config.TLS()
	st.TLSProfile, st.TLS = profile, &tlsProfile
	var errs []error
	for _, n := range append([]string{Direct}, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == Direct })...) {
		r := &Running{Ports: s.Config.Targets[n], Protocols: s.protocols(n, defs[n])}
		if def := defs[n]; def != nil {
			r.TLSDifferences = def.TLSDifferences
		}
		if err := s.waitServing(ctx, r, prober, nil); err != nil {
			if def := defs[n]; def != nil && def.Optional {
				st.Missing[n] = LabelNotInstalled + ": not started by docker compose (optional): " + def.IfMissing
				continue
			}
			errs = append(errs, fmt.Errorf("target %s: %w (see `docker compose logs %s`)", n, err, n))
			continue
		}
		if err := s.verifyServing(ctx, n, r, prober); err != nil {
			errs = append(errs, fmt.Errorf("%w (its container renders its config with the TLS profile %s: the same TLS_PROFILE for compose and here?)", err, profile))
			continue
		}
		r.Version = "compose"
		if pid, comm := PortHolder("tcp", r.Ports.TLS); pid > 0 {
			r.Process, r.Version = Adopt(pid), "compose: "+comm
		}
		st.Targets[n] = r
		s.logf("%-8s attached  pid %-7d %s%s%s", n, r.PID, r.Version, tlsSummary(r.TLS), streamsSummary(r.MaxStreams))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.MkdirAll(s.RunDir, 0o755); err != nil {
		return err
	}
	return s.saveState(st)
}

// Healthy is a compose healthcheck's verdict on one target, run in its container: a verified
// answer over every protocol the target serves, each asked once within timeout, so that
// `docker compose up --wait` returns only when the stack answers as `make up` requires.
func (s *Stack) Healthy(ctx context.Context, name string, timeout time.Duration) error {
	if _, ok := s.Config.Targets[name]; !ok {
		return fmt.Errorf("unknown target %q: targets are %s", name, strings.Join(s.Config.Names(), ", "))
	}
	defs, err := s.Definitions([]string{name})
	if err != nil {
		return err
	}
	prober, err := NewProber(s.Config.Hostname, s.probeAddr(), CertsIn(filepath.Join(s.RunDir, "certs")).CAFile)
	if err != nil {
		return err
	}
	ports := s.Config.Targets[name]
	for _, proto := range s.protocols(name, defs[name]) {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err := prober.Probe(pctx, proto, proto.Port(ports))
		cancel()
		if err != nil {
			return fmt.Errorf("target %s over %s: %w", name, proto, err)
		}
	}
	return nil
}

// errExited is waitServing's error when the target's process ended.
var errExited = errors.New("the target exited")

// waitServing polls, for at most ReadyTimeout, until the target passes a verified probe over
// each of its protocols; it gives up at once with errExited when exited (may be nil) closes.
func (s *Stack) waitServing(ctx context.Context, r *Running, prober *Prober, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, s.ReadyTimeout)
	defer cancel()
	for _, proto := range r.Protocols {
		var last error // the last attempt that ended on its own: why the target is not ready
		for {
			err := prober.Probe(ctx, proto, proto.Port(r.Ports))
			if err == nil {
				break
			}
			if last == nil || ctx.Err() == nil {
				last = err // an attempt the deadline cut short says only "deadline exceeded"
			}
			select {
			case <-exited:
				return errExited
			case <-ctx.Done():
				return fmt.Errorf("no verified answer over %s within %v: %w", proto, s.ReadyTimeout, last)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// IsUp tells whether the state's target is running: for a native stack, the very process it
// started; for an attached one, its process (when /proc showed it) or, failing that, the record.
func (st *State) IsUp(name string) bool {
	r, ok := st.Targets[name]
	switch {
	case !ok:
		return false
	case st.Engine == EngineCompose && r.PID == 0:
		return true
	}
	return r.Alive()
}

// Adopt identifies a process another program started (pid, start time, command line), so that
// Alive tells whether it is still that one. Stop must not be called on it: it is not ours.
func Adopt(pid int) Process {
	p := Process{PID: pid}
	p.StartTick, _ = startTick(pid)
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		p.Argv = strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
	}
	return p
}
