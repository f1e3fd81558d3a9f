// Package stack runs the benchmark stack natively: the upstream, the proxies and their
// certificates, all on loopback, started and stopped by pid.
package stack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Direct is the target that is the upstream itself: the no-proxy baseline.
const Direct = "direct"

// Ports are one target's listeners.
type Ports struct {
	TLS int `json:"tls"`
	H1C int `json:"h1c"`
}

// Config is targets.json: the one source of truth for hostnames, ports and shared tuning that
// the stack, the scenarios and compose.yaml all read.
type Config struct {
	Hostname          string           `json:"hostname"`
	Address           string           `json:"address"`
	Workers           int              `json:"workers"`
	UpstreamKeepalive int              `json:"upstream_keepalive"`
	UploadLimit       int64            `json:"upload_limit_bytes"`
	Upstream          Ports            `json:"upstream"`
	Targets           map[string]Ports `json:"targets"`
}

// LoadConfig reads and validates a targets file. Unknown keys are errors, so a typo never
// silently falls back to a default.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read targets file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

func (c *Config) validate() error {
	var errs []error
	if c.Hostname == "" {
		errs = append(errs, errors.New(`"hostname" is empty`))
	}
	if c.Address != "127.0.0.1" && c.Address != "::1" {
		errs = append(errs, fmt.Errorf(`"address" is %q: load goes to loopback only (127.0.0.1 or ::1)`, c.Address))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf(`"workers" is %d: it must be at least 1`, c.Workers))
	}
	if c.UpstreamKeepalive < 1 {
		errs = append(errs, fmt.Errorf(`"upstream_keepalive" is %d: it must be at least 1`, c.UpstreamKeepalive))
	}
	if c.UploadLimit < 1 {
		errs = append(errs, fmt.Errorf(`"upload_limit_bytes" is %d: it must be at least 1`, c.UploadLimit))
	}
	d, ok := c.Targets[Direct]
	if !ok {
		errs = append(errs, fmt.Errorf(`"targets" has no %q entry (the upstream as the no-proxy baseline)`, Direct))
	} else if d.H1C != c.Upstream.H1C {
		errs = append(errs, fmt.Errorf(`targets.direct.h1c is %d but upstream.h1c is %d: direct is the upstream, they must match`, d.H1C, c.Upstream.H1C))
	}
	owner := map[int]string{}
	for _, name := range c.Names() {
		p := c.Targets[name]
		for _, port := range []struct {
			kind string
			n    int
		}{{"tls", p.TLS}, {"h1c", p.H1C}} {
			if port.n < 1 || port.n > 65535 {
				errs = append(errs, fmt.Errorf("targets.%s.%s is %d: not a port", name, port.kind, port.n))
				continue
			}
			if prev, dup := owner[port.n]; dup {
				errs = append(errs, fmt.Errorf("targets.%s.%s: port %d is already %s's", name, port.kind, port.n, prev))
			}
			owner[port.n] = name + "." + port.kind
		}
	}
	return errors.Join(errs...)
}

// Names lists the targets, direct first and the rest sorted, so every table has one order.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Targets))
	for n := range c.Targets {
		if n != Direct {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if _, ok := c.Targets[Direct]; ok {
		names = append([]string{Direct}, names...)
	}
	return names
}

// SelectsAll tells whether a target list is "all" (or empty): every target of the file, so that
// one that fails to install or start is recorded and the others go on (Stack.KeepGoing).
func SelectsAll(spec string) bool {
	spec = strings.TrimSpace(spec)
	return spec == "" || spec == "all"
}

// Select resolves a user's target list: "all" (or empty) means every target in the file;
// otherwise a comma-separated list of names, each of which must exist.
func (c *Config) Select(spec string) ([]string, error) {
	if SelectsAll(spec) {
		return c.Names(), nil
	}
	spec = strings.TrimSpace(spec)
	var out []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if _, ok := c.Targets[n]; !ok {
			return nil, fmt.Errorf("unknown target %q: valid targets are all, %s", n, strings.Join(c.Names(), ", "))
		}
		out = append(out, n)
	}
	return out, nil
}
