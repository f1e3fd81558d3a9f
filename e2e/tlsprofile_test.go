package e2e

import (
	"reflect"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/stack"
)

// TestTLSProfileRefusesAnotherGroup proves that the TLS profile of targets.json is checked, not
// assumed: a target whose template asks for another key exchange group (a copy of nginx with
// P-256) is not up at `proxybench up`, and says so, naming the group it negotiated and the one
// the profile wants; named explicitly it is an error at once, and with every target asked for
// (TARGETS=all) the others come up, each with what it negotiated recorded in the state and
// shown by status.
func TestTLSProfileRefusesAnotherGroup(t *testing.T) {
	// the file's own profile (X25519), which the copies of nginx can serve
	t.Setenv(stack.TLSProfileEnv, "")
	const good, other = "nginx-profile", "nginx-p256"
	h := variantHarness(t, 850, nginxVariant{name: good},
		nginxVariant{other, [][2]string{{"ssl_ecdh_curve {{.TLS.Group}};", "ssl_ecdh_curve P-256;"}}})

	_, profile := h.cfg.TLS()
	wantWhy := "TLS group P-256 negotiated, the profile wants " + profile.Group

	t.Run("named explicitly: an error at once", func(t *testing.T) {
		out, err := h.proxybench(t, "up", "-targets", other)
		if err == nil {
			t.Errorf("up -targets %s succeeded:\n%s", other, out)
		}
		if !strings.Contains(out, wantWhy) {
			t.Errorf("up -targets %s does not say %q:\n%s", other, wantWhy, out)
		}
		if st := readStateOrEmpty(t, h.run); len(st.Targets) > 0 {
			t.Errorf("up -targets %s left targets up: %v", other, st.Names())
			h.down(t)
		}
	})

	out, err := h.proxybench(t, "up")
	t.Cleanup(func() {
		if st := readStateOrEmpty(t, h.run); len(st.Targets) > 0 {
			h.down(t)
		}
	})
	if err != nil {
		t.Fatalf("up with TARGETS=all and a target of another group: %v\n%s", err, out)
	}
	st := readState(t, h.run)
	if !st.IsUp(good) || !st.IsUp(stack.Direct) || st.IsUp(other) {
		t.Errorf("up: want %s and direct up, %s not; state has %v\n%s", good, other, st.Names(), out)
	}
	why := st.Missing[other]
	if !strings.HasPrefix(why, stack.LabelNotVerified+": ") || !strings.Contains(why, wantWhy) {
		t.Errorf("state: %s is %q, want %s naming the group (%q)", other, why, stack.LabelNotVerified, wantWhy)
	}
	if st.TLS == nil || *st.TLS != profile {
		t.Errorf("state: TLS profile %v, want %v", st.TLS, profile)
	}
	want := stack.Negotiated{Version: profile.Version, Group: profile.Group, Cipher: profile.Cipher, Resumption: profile.Resumption}
	for _, n := range []string{stack.Direct, good} {
		r := st.Targets[n]
		if r == nil {
			continue
		}
		for _, p := range r.Protocols {
			got := r.TLS[p]
			switch {
			case p == stack.H1C && got != nil:
				t.Errorf("state: %s %s (cleartext) has TLS %v", n, p, got)
			case p != stack.H1C && (got == nil || !reflect.DeepEqual(*got, want)):
				t.Errorf("state: %s %s negotiated %v, want %v", n, p, got, want)
			}
		}
	}

	out, err = h.proxybench(t, "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for n, want := range map[string]string{
		good:         h.cfg.TLSProfile + ": " + want.String(),
		stack.Direct: h.cfg.TLSProfile + ": " + want.String(),
		other:        stack.LabelNotVerified,
	} {
		if !statusLine(out, n, want) {
			t.Errorf("status does not show %s with %q:\n%s", n, want, out)
		}
	}
}
