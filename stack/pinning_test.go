package stack

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestAutoPinning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cpus []int
		want string // layout, or the error's start
	}{
		{seq(1), "PIN=auto needs at least 3 CPUs"},
		{seq(2), "PIN=auto needs at least 3 CPUs"},
		{seq(3), "client 0, proxy 1, upstream 2"},
		{seq(4), "client 0-1, proxy 2, upstream 3"},
		{seq(8), "client 0-3, proxy 4-5, upstream 6-7"},
		{seq(16), "client 0-7, proxy 8-11, upstream 12-15"},
		{seq(6), "client 0-2, proxy 3-4, upstream 5"},
		{[]int{2, 3, 5, 7}, "client 2-3, proxy 5, upstream 7"},
	} {
		p, err := AutoPinning(tc.cpus)
		got := p.String()
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("AutoPinning(%v) = %q, want %q", tc.cpus, got, tc.want)
		}
		if err == nil {
			all := append(append(slices.Clone(p.Client), p.Proxy...), p.Upstream...)
			if !slices.Equal(all, tc.cpus) {
				t.Errorf("AutoPinning(%v) uses %v: every CPU once", tc.cpus, all)
			}
		}
	}
}

func TestParsePinning(t *testing.T) {
	t.Parallel()
	avail := seq(8)
	for _, tc := range []struct {
		spec, want string // layout, or a part of the error
	}{
		{"", "none"},
		{"none", "none"},
		{"auto", "client 0-3, proxy 4-5, upstream 6-7"},
		{"client=0-1,proxy=2,upstream=3", "client 0-1, proxy 2, upstream 3"},
		{"client=0,2,4-5,proxy=1,upstream=3", "client 0,2,4-5, proxy 1, upstream 3"},
		{"upstream=7,client=0,proxy=6", "client 0, proxy 6, upstream 7"},
		{"client=0-1,proxy=1,upstream=3", "CPU 1 is both client's and proxy's"},
		{"client=0,proxy=1,upstream=0", "CPU 0 is both client's and upstream's"},
		{"client=0,proxy=1,upstream=1", "client 0, proxy 1, upstream 1"},
		{"client=0,proxy=1", "no CPUs for upstream"},
		{"client=0,proxy=1,upstream=9", "CPU 9 of upstream is not one this machine lets us use (0-7)"},
		{"client=0,proxy=1,backend=2", `unknown role "backend"`},
		{"0,client=1,proxy=2,upstream=3", "before any role"},
		{"client=3-1,proxy=4,upstream=5", `"3-1" is not a CPU range`},
		{"client=x,proxy=4,upstream=5", `"x" is not a CPU number or range`},
	} {
		p, err := ParsePinning(tc.spec, avail)
		got := p.String()
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("ParsePinning(%q) = %q, want %q", tc.spec, got, tc.want)
		}
	}
}

// Wrap's prefix really pins: a program run under it may use exactly its role's CPUs.
func TestPinningWrapRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Fatalf("taskset (util-linux) is missing: %v", err)
	}
	avail, err := AvailableCPUs()
	if err != nil {
		t.Fatal(err)
	}
	p := &Pinning{Client: avail[:1], Proxy: avail[len(avail)-1:], Upstream: avail[len(avail)-1:]}
	for _, role := range []string{RoleClient, RoleProxy} {
		argv := p.Wrap(role, []string{"grep", "Cpus_allowed_list", "/proc/self/status"})
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		if got, want := strings.Fields(string(out))[1], formatCPUList(p.Set(role)); got != want {
			t.Errorf("%s: runs on CPUs %s, want %s", role, got, want)
		}
	}
	var none *Pinning
	if got := none.Wrap(RoleClient, []string{"k6"}); !slices.Equal(got, []string{"k6"}) {
		t.Errorf("no pinning wraps k6 as %v", got)
	}
}
