// Package cloud runs a scenario with k6 cloud, as `make k6-cloud` does: it checks what the
// mode asks for, that k6 is logged in to k6 cloud, that a scenario sent to Grafana's load
// generators can run there as we measure it, and hands it to `k6 cloud run`. MODE=local's run
// on the local stack is the caller's (it is `make k6`'s, with another k6 command).
//
// Nothing here reads the environment: the caller passes in what it read (Settings, a getenv
// for the login, K6's environment), so that a test gives each value as it wants it.
package cloud

import (
	"errors"
	"fmt"
	"strings"
)

// The two ways `make k6-cloud` runs a scenario with k6 cloud.
const (
	// Local runs on this machine, against the local stack, with bin/k6 (every scenario,
	// our extensions included), streaming its metrics to k6 cloud; the result JSON is written
	// as by `make k6`.
	Local = "local"
	// Remote uploads a portable scenario for Grafana's load generators (stock k6, registry
	// extensions only) to run against TargetURL: they cannot reach this machine's loopback.
	Remote = "cloud"
)

// Settings are one `make k6-cloud` beyond its cell: MODE, TARGET_URL and SEGMENTS as given.
type Settings struct {
	Mode, TargetURL, Segments string
}

// Check refuses a split (k6 cloud runs one k6) and a mode without what it needs, before
// anything runs: each error names the variable at fault.
func (s Settings) Check() error {
	if v := strings.TrimSpace(s.Segments); v != "" && v != "1" {
		return fmt.Errorf("SEGMENTS=%s: make k6-cloud runs one k6; split load is make k6 SEGMENTS=N here, k6 cloud's own distribution (options.cloud.distribution) there, or make k8s", v)
	}
	switch s.Mode {
	case Local:
		if s.TargetURL != "" {
			return errors.New("TARGET_URL is for MODE=cloud: MODE=local runs against the local stack's TARGET")
		}
	case Remote:
		if s.TargetURL == "" {
			return errors.New("MODE=cloud needs TARGET_URL, the target's base URL as Grafana's load generators reach it (https://proxy.example:8443): they cannot reach this machine's loopback stack")
		}
	default:
		return fmt.Errorf("MODE=%q: want %s (run here with bin/k6, stream to k6 cloud) or %s (Grafana's load generators, against TARGET_URL)", s.Mode, Local, Remote)
	}
	return nil
}
