// Package k8s writes what the k6-operator needs to run one scenario split over several runners:
// a TestRun (k6.io/v1alpha1) and the ConfigMap holding the scenario as a k6 archive. Nothing is
// applied: there is no cluster on the machines this is built on, and the user's kubectl,
// context and namespace are theirs to choose (README.md).
//
// Nothing here reads the environment: the caller passes in what it read (Settings, a getenv
// for the runners' env, K6's environment), so that a test gives each value as it wants it.
package k8s

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/proxybench/proxybench/runner"
)

// MaxParallelism is the most runners a test is split over: spec.parallelism's type is int32.
const MaxParallelism = 1<<31 - 1

// podSummary is SUMMARY_JSON on the runners. Without it the scripts write their result to
// results/<testid>/ under the working directory, which no pod has (k6 cannot make directories),
// and every runner would end with "failed to handle the end-of-test summary". /tmp is in every
// image; the file goes with the pod (the text summary stays in the pod's log).
const podSummary = "/tmp/proxybench-result.json"

// targetRE is a TARGET name for a remote target: a tag value (shellSafeRE) and a label.
var targetRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Settings are one `make k8s`: the cell, how it is split, and where the cluster finds the
// image, the target and InfluxDB. The caller checks what is not the cluster's (the scenario,
// profile, testid and knobs) as `make k6` does.
type Settings struct {
	Scenario, Proto, Profile, TestID string
	// Parallelism is spec.parallelism, 1 to MaxParallelism.
	Parallelism int
	Image       string
	// TargetURL is the target's base URL as the cluster reaches it; Target its name in the
	// tags (empty: the URL's host, as the scripts take it).
	TargetURL, Target string
	// InfluxURL, when set, is the InfluxDB every runner streams to.
	InfluxURL string
	// Separate is spec.separate: one runner per node.
	Separate bool
	// Local is set for this machine's own node (make k8s-run), nil for a cluster of the user's.
	Local *Local
}

// Local is what a TestRun for this machine's node has besides: its images are imported, never
// pulled, and the runners see the host's files a k6 here would at the same paths (the CA, the
// targets, the folder their results go to).
type Local struct {
	StarterImage string
	Mounts       []Mount
	// Env is added to the runners' env only, never to the archive's: values that differ from
	// one runner to the next ($(VAR) of the pod's own env), such as SUMMARY_JSON.
	Env []EnvVar
}

// Mount is a host path mounted at the same path in every runner.
type Mount struct {
	Path     string
	Writable bool
}

// Cell is the cell the manifests are of: a probe with PROTO adds it, as the runner names results.
func (s Settings) Cell() string {
	if s.Proto != "" {
		return s.Scenario + "-" + s.Proto
	}
	return s.Scenario
}

// Check refuses the image, target and InfluxDB a cluster cannot use; each error names the
// variable at fault, and all of them are reported at once.
func (s Settings) Check() error {
	var errs []error
	if s.Image == "" {
		errs = append(errs, errors.New("no IMAGE: give the runner image, our bin/k6 built from k8s/runner.Dockerfile and pushed where the cluster pulls from (make k8s IMAGE=registry.example/proxybench-k6:v1 …)"))
	} else if strings.ContainsAny(s.Image, " \t\n\"'") {
		errs = append(errs, fmt.Errorf("IMAGE=%q: an image reference has no spaces or quotes", s.Image))
	}
	if err := checkTargetURL(s.TargetURL); err != nil {
		errs = append(errs, err)
	}
	if s.Target != "" && !targetRE.MatchString(s.Target) {
		errs = append(errs, fmt.Errorf("TARGET=%q: a remote target's name is letters, digits, \".\", \"_\" or \"-\", 63 at most (it is a tag on every sample; empty: TARGET_URL's host)", s.Target))
	}
	if s.InfluxURL != "" {
		if err := checkInfluxURL(s.InfluxURL); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkTargetURL refuses what a cluster cannot reach: nothing, or this machine's loopback stack.
// The URL's form is the scripts' to check (scenarios/lib/targets.js), with the scenario's
// protocol at hand; `k6 archive` runs them before anything is written.
func checkTargetURL(v string) error {
	if v == "" {
		return errors.New("no TARGET_URL: the runners run in a cluster, which cannot reach this machine's loopback stack; give the target's base URL as the cluster reaches it (make k8s TARGET_URL=https://proxy.example:8443 …; http://… for h1c)")
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("TARGET_URL=%q: want a base URL such as https://proxy.example:8443 or http://10.0.0.5:8081", v)
	}
	host := u.Hostname()
	if host == "localhost" || host == "bench.test" || strings.HasPrefix(host, "127.") || host == "::1" || host == "0.0.0.0" || host == "::" {
		return fmt.Errorf("TARGET_URL=%q is this machine's loopback stack, which no runner in a cluster reaches: give an address the cluster routes to this machine (or the proxy's own)", v)
	}
	return nil
}

// checkInfluxURL checks INFLUXDB_URL as the output's --out argument takes it.
func checkInfluxURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(v, " \t\n") {
		return fmt.Errorf("INFLUXDB_URL=%q: want InfluxDB's URL as the cluster reaches it, such as http://influxdb.monitoring:8086 or http://10.0.0.9:8086/k6 (the path is the bucket)", v)
	}
	return nil
}

// EnvVar is one variable of a runner's env, as a pod's container lists it.
type EnvVar struct {
	Name      string     `yaml:"name"`
	Value     string     `yaml:"value,omitempty"`
	ValueFrom *EnvSource `yaml:"valueFrom,omitempty"`
}

// EnvSource is a value the pod's own object gives (its labels).
type EnvSource struct {
	FieldRef struct {
		FieldPath string `yaml:"fieldPath"`
	} `yaml:"fieldRef"`
}

// RunnerEnv is what every runner gets, and `k6 archive` as -e: the variables the scripts read
// (runner.ScriptEnv) that getenv says the user set, and those a runner needs.
func (s Settings) RunnerEnv(getenv func(string) string) []EnvVar {
	given := map[string]string{
		"TARGET_URL": s.TargetURL, "TARGET": s.Target, "PROFILE": s.Profile, "PROTO": s.Proto, "TESTID": s.TestID,
	}
	var env []EnvVar
	for _, k := range runner.ScriptEnv {
		v, ok := given[k]
		if !ok {
			// this machine's (runner.LocalEnv) are not copied: env sets those a runner needs
			// (GODEBUG: the caller's, plus what the cell needs)
			if slices.Contains(runner.LocalEnv, k) {
				continue
			}
			v = strings.TrimSpace(getenv(k))
		}
		if v != "" {
			env = append(env, EnvVar{Name: k, Value: v})
		}
	}
	if s.Parallelism > 1 {
		// each runner does its share of the plan: the scripts then leave the plan's totals
		// (fresh: all REQUESTS; reused: the connections allowed) out of every runner's
		// thresholds, which its share alone would fail (scenarios/lib/options.js segmented())
		env = append(env, EnvVar{Name: "SEGMENTS", Value: strconv.Itoa(s.Parallelism)})
	}
	env = append(env, EnvVar{Name: "SUMMARY_JSON", Value: podSummary})
	godebug := strings.TrimSpace(getenv("GODEBUG"))
	if (runner.Job{Scenario: s.Scenario, Proto: s.Proto}).H1OverTLS() {
		// the process must have it (runner.Env does the same): Go's client offers h2 by ALPN
		// otherwise, and k6 has no switch per request
		godebug = strings.Trim(godebug+",http2client=0", ",")
	}
	if godebug != "" {
		env = append(env, EnvVar{Name: "GODEBUG", Value: godebug})
	}
	return env
}
