package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/runner"
)

// portable refuses what Grafana's load generators cannot run as we measure it: a script that
// needs our extensions (k6 deps says which), HTTP/3 (ours), and HTTP/1.1 over TLS, which needs
// GODEBUG=http2client=0 in k6's own process (Go offers h2 by ALPN otherwise, and a cloud run
// sets no process environment). The protocol checks come first: they need no k6.
func (k K6) portable(ctx context.Context, scenariosDir string, cells []engine.Cell) error {
	for _, c := range cells {
		if len(c.Protos) > 1 {
			return fmt.Errorf("MODE=cloud runs one k6 test: give %s one PROTO (h1c or h2)", c.Scenario)
		}
		protos := c.Protos
		if len(protos) == 0 {
			protos = []string{""} // a throughput scenario: its name says its protocol
		}
		for _, p := range protos {
			switch runner.JobOf(c.Entry, "", p).Requires() {
			case "h3":
				return fmt.Errorf("MODE=cloud: %s over HTTP/3 runs on our k6/x/proxybench/http3, which k6 cloud's load generators do not have: use MODE=local (bin/k6 here, streamed to k6 cloud), or a private load zone or the k6-operator with our image (make k8s)", c.Scenario)
			case "h1":
				return fmt.Errorf("MODE=cloud: %s is HTTP/1.1 over TLS, which k6 measures only with GODEBUG=http2client=0 in its own process (Go offers h2 by ALPN otherwise) and a cloud run cannot set that: use MODE=local, or h1c and h2 in the cloud", c.Scenario)
			}
		}
		needs, err := k.customExtensions(ctx, filepath.Join(scenariosDir, c.Scenario+".js"))
		if err != nil {
			return err
		}
		if len(needs) > 0 {
			return fmt.Errorf("MODE=cloud: %s needs %s, compiled into bin/k6 only: use MODE=local, or a private load zone or the k6-operator with our image (make k8s)", c.Scenario, strings.Join(needs, ", "))
		}
	}
	return nil
}

// customExtensions are the extensions of ours a script needs, as `k6 deps` lists them.
func (k K6) customExtensions(ctx context.Context, script string) ([]string, error) {
	out, err := k.command(ctx, "deps", "--json", script).Output()
	if err != nil {
		return nil, fmt.Errorf("k6 deps %s: %w", script, err)
	}
	var deps struct {
		BuildDependencies map[string]string `json:"buildDependencies"`
	}
	if err := json.Unmarshal(out, &deps); err != nil {
		return nil, fmt.Errorf("k6 deps %s: %w", script, err)
	}
	var ours []string
	for name := range deps.BuildDependencies {
		if strings.HasPrefix(name, "k6/x/") {
			ours = append(ours, name)
		}
	}
	slices.Sort(ours)
	return ours, nil
}
