package runner

import (
	"slices"

	"github.com/proxybench/proxybench/scenarios"
)

// The matrix, from the catalogue (scenarios/catalogue.json), in its order, each scenario with
// its entry.
//
// Throughput scenarios: protocol × connection pattern; the h3 ones run through
// k6/x/proxybench/http3. Probes: each sampled over each of its protocols (WebSocket upgrades are
// HTTP/1.1 only: an h2 or h3 WebSocket needs extended CONNECT, which k6 does not speak).
// EqualLoad: the open-model pass `bench` runs after the matrix (equalload.go), as it needs the
// matrix's figures first. Bodies: the body-size sweep, a mode of its own (MODES=bodies).
var (
	Throughput = catalogued.throughput
	Probes     = catalogued.probes
	EqualLoad  = catalogued.equalLoad
	Bodies     = catalogued.bodies
	// Idle holds connections idle against a target (MODES=idle), over each of its protocols.
	Idle = catalogued.idle
)

var catalogued = matrix()

type families struct {
	throughput, probes, bodies []scenarios.Scenario
	equalLoad, idle            scenarios.Scenario
}

func matrix() families {
	var f families
	for _, s := range scenarios.All() {
		switch {
		case s.Throughput():
			f.throughput = append(f.throughput, s)
		case s.Mode == scenarios.Probe:
			f.probes = append(f.probes, s)
		case s.Mode == scenarios.EqualLoad:
			f.equalLoad = s
		case s.Mode == scenarios.Idle:
			f.idle = s
		case s.Mode == scenarios.Bodies:
			f.bodies = append(f.bodies, s)
		}
	}
	return f
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
	s, ok := scenarios.Lookup(scenario)
	if !ok {
		return scenario
	}
	return k6Scenario(s, proto)
}

func k6Scenario(s scenarios.Scenario, proto string) string {
	if proto != "" && len(s.Protos) > 1 {
		return s.Name + "-" + proto
	}
	return s.Name
}

// EqualLoadMode is the mode of the equal-load pass's results.
const EqualLoadMode = scenarios.EqualLoad

// EqualLoadFraction is the offered load of the equal-load pass, as a fraction of the slowest
// valid target's median reused req/s.
const EqualLoadFraction = 0.5
