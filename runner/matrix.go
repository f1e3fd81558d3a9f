package runner

import (
	"slices"

	"github.com/proxybench/proxybench/scenarios"
)

// A Family is scenarios of one kind with the protocols each runs over.
type Family struct {
	Scenario string
	Protos   []string
}

// The matrix, from the catalogue (scenarios/catalogue.json), in its order.
//
// Throughput scenarios: protocol × connection pattern; the h3 ones run through
// k6/x/proxybench/http3. Probes: each sampled over each of its protocols (WebSocket upgrades are
// HTTP/1.1 only: an h2 or h3 WebSocket needs extended CONNECT, which k6 does not speak).
// EqualLoad: the open-model pass `bench` runs after the matrix (equalload.go), as it needs the
// matrix's figures first.
var (
	Throughput = catalogued.throughput
	Probes     = catalogued.probes
	EqualLoad  = catalogued.equalLoad
)

var catalogued = matrix()

type families struct {
	throughput []string
	probes     []Family
	equalLoad  Family
}

func matrix() families {
	var f families
	for _, s := range scenarios.All() {
		switch {
		case s.Throughput():
			f.throughput = append(f.throughput, s.Name)
		case s.Mode == scenarios.Probe:
			f.probes = append(f.probes, Family{s.Name, s.Protos})
		case s.Mode == scenarios.EqualLoad:
			f.equalLoad = Family{s.Name, s.Protos}
		}
	}
	return f
}

// Requires is the protocol a cell needs its target to serve: the probe's PROTO, or the one a
// throughput scenario runs over (reused-h3 → h3).
func Requires(j Job) string {
	if j.Proto != "" {
		return j.Proto
	}
	if s, ok := scenarios.Lookup(j.Scenario); ok && len(s.Protos) == 1 {
		return s.Protos[0]
	}
	return ""
}

// IsProbe tells a probe scenario from a throughput one.
func IsProbe(scenario string) bool {
	s, ok := scenarios.Lookup(scenario)
	return ok && s.Mode == scenarios.Probe
}

// ProbeProtos are the protocols a probe runs over.
func ProbeProtos(scenario string) []string {
	if s, ok := scenarios.Lookup(scenario); ok && s.Mode == scenarios.Probe {
		return slices.Clone(s.Protos)
	}
	return nil
}

// ModeOf is the mode of a scenario's results, as its script sets it: reused, fresh, probe or
// EqualLoadMode.
func ModeOf(scenario string) string {
	s, _ := scenarios.Lookup(scenario)
	return s.Mode
}

// K6Scenario is the name of the measured k6 scenario of a run of scenario over proto, the
// scenario tag of its samples (scenarios/lib/config.js): the script's name, and for a scenario
// of several protocols the protocol too (json-h1c), as k6's proto tag is HTTP/1.1 for h1 and
// h1c alike.
func K6Scenario(scenario, proto string) string {
	if s, ok := scenarios.Lookup(scenario); ok && proto != "" && len(s.Protos) > 1 {
		return scenario + "-" + proto
	}
	return scenario
}

// EqualLoadMode is the mode of the equal-load pass's results.
const EqualLoadMode = scenarios.EqualLoad

// EqualLoadFraction is the offered load of the equal-load pass, as a fraction of the slowest
// valid target's median reused req/s.
const EqualLoadFraction = 0.5
