package stack

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUseNetwork: compose's settings (PROXYBENCH_LISTEN, PROXYBENCH_UPSTREAM: compose.bridge.yaml's,
// or compose.yaml's STACK_LISTEN) reach what a target runs, the upstream as an address resolved
// once, and the stack host's address reaches the certificate and the probes; a wrong one is
// refused with the variable at fault named; none leaves the config's loopback address
// everywhere.
func TestUseNetwork(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		n              Network
		listen, upAddr string   // want: vars' Addr, UpstreamAddr; direct's -h1c host
		probe          string   // want: where this host reaches the targets
		certIPs        []string // want: the addresses the leaf names beyond loopback's
		err            string   // want an error containing it
	}{
		{name: "host networking", n: Network{}, listen: "127.0.0.1", upAddr: "127.0.0.1:9000", probe: "127.0.0.1"},
		{name: "bridge", n: Network{Listen: "0.0.0.0", Upstream: "localhost"}, listen: "0.0.0.0", upAddr: "127.0.0.1:9000", probe: "127.0.0.1"},
		{name: "an address as the upstream", n: Network{Upstream: "10.1.2.3"}, listen: "127.0.0.1", upAddr: "10.1.2.3:9000", probe: "127.0.0.1"},
		{name: "the stack host's address", n: Network{Listen: "10.1.2.3", Upstream: "10.1.2.3"}, listen: "10.1.2.3", upAddr: "10.1.2.3:9000", probe: "10.1.2.3", certIPs: []string{"10.1.2.3"}},
		{name: "with the agent's port", n: Network{Listen: "10.1.2.3:7443", Upstream: "10.1.2.3:7443"}, listen: "10.1.2.3", upAddr: "10.1.2.3:9000", probe: "10.1.2.3", certIPs: []string{"10.1.2.3"}},
		{name: "listen on a name", n: Network{Listen: "localhost"}, err: `PROXYBENCH_LISTEN="localhost": want an IPv4 address`},
		{name: "listen on a name with a port", n: Network{Listen: "localhost:80"}, err: `PROXYBENCH_LISTEN="localhost:80"`},
		{name: "listen on IPv6", n: Network{Listen: "::"}, err: `PROXYBENCH_LISTEN="::"`},
		{name: "an upstream nobody knows", n: Network{Upstream: "no-such-service.invalid"}, err: `PROXYBENCH_UPSTREAM="no-such-service.invalid": cannot resolve`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadConfig("../targets.json")
			if err != nil {
				t.Fatal(err)
			}
			s := &Stack{Paths: Paths{RunDir: t.TempDir()}, Config: c}
			err = s.UseNetwork(context.Background(), tc.n)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("UseNetwork(%+v): %v, want an error containing %q", tc.n, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := s.vars("nginx", Certs{}, s.RunDir, nil)
			if v.Addr != tc.listen || v.UpstreamAddr != tc.upAddr || v.UpstreamHost+":9000" != tc.upAddr {
				t.Errorf("vars: Addr %q, UpstreamAddr %q, UpstreamHost %q; want %q, %q", v.Addr, v.UpstreamAddr, v.UpstreamHost, tc.listen, tc.upAddr)
			}
			cmd, err := s.command(Direct, nil, Certs{CertFile: "c", KeyFile: "k"})
			if err != nil {
				t.Fatal(err)
			}
			if i := slices.Index(cmd.argv, "-h1c"); i < 0 || cmd.argv[i+1] != tc.listen+":9000" {
				t.Errorf("direct's argv %v: want -h1c %s:9000", cmd.argv, tc.listen)
			}
			if got := s.probeAddr(); got != tc.probe {
				t.Errorf("probeAddr %q, want %q", got, tc.probe)
			}
			if got := s.CertIPs(); !slices.Equal(got, tc.certIPs) {
				t.Errorf("CertIPs %v, want %v", got, tc.certIPs)
			}
		})
	}
}

// TestListenOn: STACK_LISTEN's address reaches where every target listens and finds the
// upstream, ip:port taken as its address (the port is the agent's); what is not one IPv4
// address of this host is refused, saying why.
func TestListenOn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec   string
		listen string // want: vars' Addr, UpstreamHost; direct's -h1c and -tls host
		err    string // want an error containing it
	}{
		{spec: "127.0.0.1", listen: "127.0.0.1"},
		{spec: "127.0.0.2", listen: "127.0.0.2"}, // loopback is a /8: another address of this host
		{spec: "127.0.0.2:7443", listen: "127.0.0.2"},
		{spec: "0.0.0.0", err: "binds every interface"},
		{spec: "localhost", err: "want the IPv4 address"},
		{spec: "::1", err: "want the IPv4 address"},
		{spec: "192.0.2.1", err: "not an address of this host"}, // TEST-NET-1: nobody's
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			t.Parallel()
			c, err := LoadConfig("../targets.json")
			if err != nil {
				t.Fatal(err)
			}
			s := &Stack{Paths: Paths{RunDir: t.TempDir()}, Config: c}
			err = s.ListenOn(tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.spec) {
					t.Fatalf("ListenOn(%q): %v, want an error naming it and saying %q", tc.spec, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := s.vars("nginx", Certs{}, s.RunDir, nil)
			if v.Addr != tc.listen || v.UpstreamHost != tc.listen || v.UpstreamAddr != tc.listen+":9000" {
				t.Errorf("vars: Addr %q, UpstreamAddr %q, UpstreamHost %q; want %s everywhere", v.Addr, v.UpstreamAddr, v.UpstreamHost, tc.listen)
			}
			cmd, err := s.command(Direct, nil, Certs{CertFile: "c", KeyFile: "k"})
			if err != nil {
				t.Fatal(err)
			}
			for flag, port := range map[string]string{"-h1c": "9000", "-tls": "8440"} {
				if i := slices.Index(cmd.argv, flag); i < 0 || cmd.argv[i+1] != tc.listen+":"+port {
					t.Errorf("direct's argv %v: want %s %s:%s", cmd.argv, flag, tc.listen, port)
				}
			}
		})
	}
}

// TestComposeTestID: the upstream's start is the stack's testid, in the file the k6 service
// reads, replaced when the stack starts again.
func TestComposeTestID(t *testing.T) {
	t.Parallel()
	s := &Stack{Paths: Paths{RunDir: t.TempDir()}}
	for _, at := range []time.Time{time.Date(2026, 11, 26, 12, 0, 5, 0, time.UTC), time.Date(2026, 11, 26, 14, 30, 0, 0, time.FixedZone("CET", 3600))} {
		if err := s.writeComposeTestID(at); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(s.RunDir, "compose", "testid"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "compose-" + at.UTC().Format("20060102-150405") + "\n"; string(got) != want {
			t.Errorf("testid file %q, want %q", got, want)
		}
	}
}
