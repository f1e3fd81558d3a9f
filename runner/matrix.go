package runner

import "strings"

// Throughput scenarios: protocol × connection pattern. The h3 ones run through k6/x/proxybench/http3.
var Throughput = []string{
	"reused-h1", "reused-h1c", "reused-h2", "reused-h3",
	"fresh-h1", "fresh-h1c", "fresh-h2", "fresh-h3",
}

// Probes and the protocols each is sampled over. WebSocket upgrades are HTTP/1.1 only: an h2 or
// h3 WebSocket needs extended CONNECT, which k6 does not speak. stream and sse over h3 go
// through k6/x/proxybench/sse's http3 param (k6/x/proxybench/http3's connections).
var Probes = []struct {
	Scenario string
	Protos   []string
}{
	{"json", []string{"h1", "h1c", "h2", "h3"}},
	{"upload", []string{"h1", "h1c", "h2", "h3"}},
	{"stream", []string{"h1", "h1c", "h2", "h3"}},
	{"sse", []string{"h1", "h1c", "h2", "h3"}},
	{"ws", []string{"h1", "h1c"}},
}

// Requires is the protocol a cell needs its target to serve: the probe's PROTO, or the one a
// throughput scenario names (reused-h3 → h3).
func Requires(j Job) string {
	if j.Proto != "" {
		return j.Proto
	}
	if i := strings.LastIndexByte(j.Scenario, '-'); i >= 0 {
		return j.Scenario[i+1:]
	}
	return ""
}

// IsProbe tells a probe scenario from a throughput one.
func IsProbe(scenario string) bool {
	for _, p := range Probes {
		if p.Scenario == scenario {
			return true
		}
	}
	return false
}

// ProbeProtos are the protocols a probe runs over.
func ProbeProtos(scenario string) []string {
	for _, p := range Probes {
		if p.Scenario == scenario {
			return p.Protos
		}
	}
	return nil
}

// EqualLoad is the open-model pass `bench` runs after the matrix (scenarios/equal-load.js):
// for each of these protocols it serves, every target at the same constant arrival rate,
// EqualLoadFraction of the slowest valid target's median req/s in reused-<proto>. Apart from
// Throughput and Probes: it needs the matrix's figures first.
var EqualLoad = struct {
	Scenario string
	Protos   []string
}{"equal-load", []string{"h1", "h1c", "h2", "h3"}}

// ModeOf is the mode of a scenario's results, as its script sets it: reused or fresh (a
// throughput scenario's prefix), probe, or EqualLoadMode.
func ModeOf(scenario string) string {
	switch {
	case scenario == EqualLoad.Scenario:
		return EqualLoadMode
	case IsProbe(scenario):
		return "probe"
	}
	mode, _, _ := strings.Cut(scenario, "-")
	return mode
}

// K6Scenario is the name of the measured k6 scenario of a run of scenario over proto, the
// scenario tag of its samples (scenarios/lib/config.js): the script's name, and for probes and
// the equal-load pass the protocol too (json-h1c), as k6's proto tag is HTTP/1.1 for h1 and h1c
// alike.
func K6Scenario(scenario, proto string) string {
	if proto != "" && (IsProbe(scenario) || scenario == EqualLoad.Scenario) {
		return scenario + "-" + proto
	}
	return scenario
}

// EqualLoadMode is the mode of the equal-load pass's results.
const EqualLoadMode = "equal-load"

// EqualLoadFraction is the offered load of the equal-load pass, as a fraction of the slowest
// valid target's median reused req/s.
const EqualLoadFraction = 0.5
