package stack

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Pinning puts the client (k6), the proxy under test and the upstream on CPU sets of their own,
// so that none of them takes CPU time from another and the client's ceiling shows as the
// client's. Processes start under `taskset -c` (util-linux), which sets the affinity before
// exec: the pid is the program's, and every thread and child it makes inherits the set.
type Pinning struct {
	Client, Proxy, Upstream []int
}

// Roles of Pinning, as a layout names them.
const (
	RoleClient   = "client"
	RoleProxy    = "proxy"
	RoleUpstream = "upstream"
)

// AvailableCPUs are the CPUs this process may run on (sched_getaffinity), ascending.
func AvailableCPUs() ([]int, error) { return AvailableCPUsOf(0) }

// AvailableCPUsOf are the CPUs process pid may run on, ascending.
func AvailableCPUsOf(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// ParsePinning reads PIN: "" or "none" (no pinning: nil), "auto" (AutoPinning of the available
// CPUs) or an explicit layout "client=0-3,proxy=4-5,upstream=6-7" whose sets are available and
// non-empty, the client's apart from the others'.
func ParsePinning(spec string, available []int) (*Pinning, error) {
	switch spec = strings.TrimSpace(spec); spec {
	case "", "none":
		return nil, nil
	case "auto":
		return AutoPinning(available)
	}
	p := &Pinning{}
	sets := map[string]*[]int{RoleClient: &p.Client, RoleProxy: &p.Proxy, RoleUpstream: &p.Upstream}
	var last string
	for _, part := range strings.Split(spec, ",") {
		// "client=0-1" starts a role's list; a part without "=" continues it ("client=0,2")
		role, list, ok := strings.Cut(part, "=")
		if !ok {
			role, list = last, part
		}
		dst, known := sets[role]
		if !known {
			if role == "" {
				return nil, fmt.Errorf("PIN=%q: %q before any role (want client=…,proxy=…,upstream=…, or auto)", spec, part)
			}
			return nil, fmt.Errorf("PIN=%q: unknown role %q: roles are client, proxy, upstream", spec, role)
		}
		cpus, err := parseCPURange(list)
		if err != nil {
			return nil, fmt.Errorf("PIN=%q: %s: %w", spec, role, err)
		}
		*dst = append(*dst, cpus...)
		last = role
	}
	seen := map[int]string{}
	for _, role := range []string{RoleClient, RoleProxy, RoleUpstream} {
		set := *sets[role]
		if len(set) == 0 {
			return nil, fmt.Errorf("PIN=%q: no CPUs for %s: every role needs its own", spec, role)
		}
		for _, c := range set {
			if !slices.Contains(available, c) {
				return nil, fmt.Errorf("PIN=%q: CPU %d of %s is not one this machine lets us use (%s)", spec, c, role, formatCPUList(available))
			}
			// The client must never share: its CPU time is what it measures with. Proxy and
			// upstream may, when asked for (a 2-CPU machine: client=0,proxy=1,upstream=1).
			if other, dup := seen[c]; dup && other != role && (other == RoleClient || role == RoleClient) {
				return nil, fmt.Errorf("PIN=%q: CPU %d is both %s's and %s's: the client's set must not overlap another", spec, c, other, role)
			}
			seen[c] = role
		}
		slices.Sort(set)
		*sets[role] = slices.Compact(set)
	}
	return p, nil
}

// AutoPinning splits the CPUs: half to the client (k6 costs more per request than any proxy
// here), and of the rest the larger part to the proxy, the smaller to the upstream. It needs at
// least 3 CPUs, one per role.
func AutoPinning(cpus []int) (*Pinning, error) {
	n := len(cpus)
	if n < 3 {
		return nil, fmt.Errorf("PIN=auto needs at least 3 CPUs, one each for client, proxy and upstream; this machine lets us use %d (%s): run without PIN", n, formatCPUList(cpus))
	}
	client := max(1, n/2)
	upstream := max(1, (n-client)/2)
	proxy := n - client - upstream
	return &Pinning{
		Client:   slices.Clone(cpus[:client]),
		Proxy:    slices.Clone(cpus[client : client+proxy]),
		Upstream: slices.Clone(cpus[client+proxy:]),
	}, nil
}

// String is the layout as the manifest and every report print it.
func (p *Pinning) String() string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("client %s, proxy %s, upstream %s", formatCPUList(p.Client), formatCPUList(p.Proxy), formatCPUList(p.Upstream))
}

// Set is the CPUs of a role.
func (p *Pinning) Set(role string) []int {
	switch role {
	case RoleClient:
		return p.Client
	case RoleProxy:
		return p.Proxy
	case RoleUpstream:
		return p.Upstream
	}
	return nil
}

// Wrap prefixes argv so that it runs on the role's CPUs; without pinning it is argv.
func (p *Pinning) Wrap(role string, argv []string) []string {
	if p == nil {
		return argv
	}
	return append([]string{"taskset", "-c", formatCPUList(p.Set(role))}, argv...)
}

// parseCPURange reads one item of the kernel's list format: "3" or "0-3".
func parseCPURange(r string) ([]int, error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(r), "-")
	a, err := strconv.Atoi(lo)
	if err != nil || a < 0 {
		return nil, fmt.Errorf("%q is not a CPU number or range", r)
	}
	b := a
	if isRange {
		if b, err = strconv.Atoi(hi); err != nil || b < a {
			return nil, fmt.Errorf("%q is not a CPU range", r)
		}
	}
	out := make([]int, 0, b-a+1)
	for c := a; c <= b; c++ {
		out = append(out, c)
	}
	return out, nil
}

// formatCPUList writes sorted CPUs in the kernel's list format.
func formatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
