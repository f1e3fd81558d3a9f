package runner

// Throughput scenarios: protocol × connection pattern.
var Throughput = []string{"reused-h1", "reused-h1c", "reused-h2", "fresh-h1", "fresh-h1c", "fresh-h2"}

// Probes and the protocols each is sampled over. WebSocket upgrades are HTTP/1.1 only: an h2
// WebSocket needs extended CONNECT, which k6 does not speak.
var Probes = []struct {
	Scenario string
	Protos   []string
}{
	{"json", []string{"h1", "h1c", "h2"}},
	{"upload", []string{"h1", "h1c", "h2"}},
	{"stream", []string{"h1", "h1c", "h2"}},
	{"sse", []string{"h1", "h1c", "h2"}},
	{"ws", []string{"h1", "h1c"}},
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
