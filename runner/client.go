package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The clients a reused h1c, h1 or h2 cell can be measured with (CLIENT). Every other cell has
// one script, on k6/http (or k6/x/proxybench/http3, k6/x/proxybench/sse, k6/x/proxybench/ws).
const (
	// ClientNative is our load loop in Go, k6/x/proxybench/load (scenarios/native/: the
	// reused and fresh h1c, h1 and h2 cells and equal load): per request it costs the client
	// about what wrk and h2load cost, so the figures are the target's rather than the client's.
	ClientNative = "native"
	// ClientK6 is k6/http from JavaScript (scenarios/reused-*.js): the portable path, for a
	// stock k6 or k6 cloud, at several times the client's CPU per request.
	ClientK6 = "k6"
)

// ParseClient checks CLIENT; empty is ClientNative.
func ParseClient(v string) (string, error) {
	switch v = strings.TrimSpace(v); v {
	case "":
		return ClientNative, nil
	case ClientNative, ClientK6:
		return v, nil
	}
	return "", fmt.Errorf("CLIENT=%q: want %s (our native load loop, the default) or %s (the k6/http scripts, as a stock k6 runs them)", v, ClientNative, ClientK6)
}

// Script is the file that runs scenario: scenarios/native/<scenario>.js when the client is
// native and the scenario has one, else scenarios/<scenario>.js. A fresh run split over k6
// instances (SEGMENTS) runs its k6/http script: the native fresh loop gives each VU a share of
// REQUESTS, which an execution segment cannot split.
func (r *Runner) Script(scenario string) (string, error) {
	if r.Client != ClientK6 && (r.Segments <= 1 || ModeOf(scenario) != "fresh") {
		native := filepath.Join(r.ScenariosDir, "native", scenario+".js")
		if _, err := os.Stat(native); err == nil {
			return native, nil
		}
	}
	script := filepath.Join(r.ScenariosDir, scenario+".js")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("unknown scenario %q: %w", scenario, err)
	}
	return script, nil
}
