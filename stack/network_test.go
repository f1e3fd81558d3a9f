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

// TestUseNetwork: compose.bridge.yaml's settings (PROXYBENCH_LISTEN, PROXYBENCH_UPSTREAM) reach
// what a target runs, the upstream as an address resolved once; a wrong one is refused with
// the variable at fault named; none leaves the config's loopback address everywhere.
func TestUseNetwork(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		n              Network
		listen, upAddr string // want: vars' Addr, UpstreamAddr; direct's -h1c host
		err            string // want an error containing it
	}{
		{name: "host networking", n: Network{}, listen: "127.0.0.1", upAddr: "127.0.0.1:9000"},
		{name: "bridge", n: Network{Listen: "0.0.0.0", Upstream: "localhost"}, listen: "0.0.0.0", upAddr: "127.0.0.1:9000"},
		{name: "an address as the upstream", n: Network{Upstream: "10.1.2.3"}, listen: "127.0.0.1", upAddr: "10.1.2.3:9000"},
		{name: "listen on a name", n: Network{Listen: "localhost"}, err: `PROXYBENCH_LISTEN="localhost": want an IPv4 address`},
		{name: "listen with a port", n: Network{Listen: "0.0.0.0:80"}, err: `PROXYBENCH_LISTEN="0.0.0.0:80"`},
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
