package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/runner"
)

// The two ways `make k6-cloud` runs a scenario with k6 cloud.
const (
	// cloudLocal runs on this machine, against the local stack, with bin/k6 (every scenario,
	// our extensions included), streaming its metrics to k6 cloud; the result JSON is written
	// as by `make k6`.
	cloudLocal = "local"
	// cloudRemote uploads a portable scenario for Grafana's load generators (stock k6, registry
	// extensions only) to run against TARGET_URL: they cannot reach this machine's loopback.
	cloudRemote = "cloud"
)

func cmdK6Cloud(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("k6-cloud", flag.ContinueOnError)
	scenario, proto := cellFlags(fs)
	mode := fs.String("mode", envOr("MODE", cloudLocal), "local (run here, stream to k6 cloud) or cloud (Grafana's load generators, against -target-url)")
	targetURL := fs.String("target-url", os.Getenv("TARGET_URL"), "mode cloud: the target's base URL, e.g. https://proxy.example:8443")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return err
	}
	cells, err := k6Cells(*scenario, *proto)
	if err != nil {
		return err
	}
	if v := strings.TrimSpace(os.Getenv("SEGMENTS")); v != "" && v != "1" {
		return fmt.Errorf("SEGMENTS=%s: make k6-cloud runs one k6; split load is make k6 SEGMENTS=N here, k6 cloud's own distribution (options.cloud.distribution) there, or make k8s", v)
	}
	switch *mode {
	case cloudLocal:
		if *targetURL != "" {
			return errors.New("TARGET_URL is for MODE=cloud: MODE=local runs against the local stack's TARGET")
		}
	case cloudRemote:
		if *targetURL == "" {
			return errors.New("MODE=cloud needs TARGET_URL, the target's base URL as Grafana's load generators reach it (https://proxy.example:8443): they cannot reach this machine's loopback stack")
		}
	default:
		return fmt.Errorf("MODE=%q: want %s (run here with bin/k6, stream to k6 cloud) or %s (Grafana's load generators, against TARGET_URL)", *mode, cloudLocal, cloudRemote)
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	k6 := filepath.Join(root, "bin", "k6")
	if *mode == cloudRemote {
		if len(cells) != 1 {
			return errors.New("MODE=cloud runs one k6 test: give one SCENARIO")
		}
		if err := cloudPortable(ctx, k6, filepath.Join(root, "scenarios"), cells); err != nil {
			return err
		}
	}
	// credentials last among the checks, first before anything reaches the network
	if err := cloudLogin(os.Getenv); err != nil {
		return err
	}
	if *mode == cloudRemote {
		env := map[string]string{"TARGET_URL": *targetURL, "TESTID": f.testid, "PROFILE": f.profile, "PROTO": strings.Join(cells[0].protos, "")}
		return cloudRun(ctx, k6, filepath.Join(root, "scenarios", cells[0].scenario+".js"), env, f.extra)
	}
	return runOnStack(ctx, f, cells, func(r *runner.Runner) {
		r.Command = []string{"cloud", "run", "--local-execution"}
	})
}

// cloudPortable refuses what Grafana's load generators cannot run as we measure it: a script
// that needs our extensions (k6 deps says which), HTTP/3 (ours), and HTTP/1.1 over TLS, which
// needs GODEBUG=http2client=0 in k6's own process (Go offers h2 by ALPN otherwise, and a
// cloud run sets no process environment).
func cloudPortable(ctx context.Context, k6, dir string, cells []cell) error {
	for _, c := range cells {
		if len(c.protos) > 1 {
			return fmt.Errorf("MODE=cloud runs one k6 test: give %s one PROTO (h1c or h2)", c.scenario)
		}
		protos := c.protos
		if len(protos) == 0 {
			protos = []string{""} // a throughput scenario: its name says its protocol
		}
		for _, p := range protos {
			job := runner.Job{Scenario: c.scenario, Proto: p}
			switch runner.Requires(job) {
			case "h3":
				return fmt.Errorf("MODE=cloud: %s over HTTP/3 runs on our k6/x/proxybench/http3, which k6 cloud's load generators do not have: use MODE=local (bin/k6 here, streamed to k6 cloud), or a private load zone or the k6-operator with our image (make k8s)", c.scenario)
			case "h1":
				return fmt.Errorf("MODE=cloud: %s is HTTP/1.1 over TLS, which k6 measures only with GODEBUG=http2client=0 in its own process (Go offers h2 by ALPN otherwise) and a cloud run cannot set that: use MODE=local, or h1c and h2 in the cloud", c.scenario)
			}
		}
		needs, err := customExtensions(ctx, k6, filepath.Join(dir, c.scenario+".js"))
		if err != nil {
			return err
		}
		if len(needs) > 0 {
			return fmt.Errorf("MODE=cloud: %s needs %s, compiled into bin/k6 only: use MODE=local, or a private load zone or the k6-operator with our image (make k8s)", c.scenario, strings.Join(needs, ", "))
		}
	}
	return nil
}

// customExtensions are the extensions of ours a script needs, as `k6 deps` lists them.
func customExtensions(ctx context.Context, k6, script string) ([]string, error) {
	cmd := exec.CommandContext(ctx, k6, "deps", "--json", script)
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false")
	out, err := cmd.Output()
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

var stackIDRE = regexp.MustCompile(`^[1-9]\d*$`)

// cloudLogin checks that k6 has what k6 cloud v2 requires, a token and a stack, from the
// environment or from what `k6 cloud login` saved, and says how to give them otherwise: k6
// would say it only after building and archiving the test.
func cloudLogin(getenv func(string) string) error {
	token, stack := getenv("K6_CLOUD_TOKEN"), getenv("K6_CLOUD_STACK_ID")
	path := k6ConfigPath(getenv)
	if token == "" || stack == "" {
		saved, err := savedCloudLogin(path)
		if err != nil {
			return err
		}
		token = cmp.Or(token, saved.Token)
		if stack == "" && saved.StackID > 0 {
			stack = fmt.Sprint(saved.StackID)
		}
	}
	var missing []string
	if token == "" {
		missing = append(missing, "token (K6_CLOUD_TOKEN)")
	}
	if stack == "" {
		missing = append(missing, "stack (K6_CLOUD_STACK_ID)")
	} else if !stackIDRE.MatchString(stack) {
		return fmt.Errorf("K6_CLOUD_STACK_ID=%q: want the stack's number (Grafana Cloud → Testing & synthetics → Performance → Settings)", stack)
	}
	if len(missing) > 0 {
		return fmt.Errorf("not logged in to k6 cloud: no %s in the environment or in %s; run `bin/k6 cloud login --token <token> --stack <stack URL or slug>` once, or set K6_CLOUD_TOKEN and K6_CLOUD_STACK_ID (a Grafana Cloud stack is required since k6 v2)", strings.Join(missing, " and no "), path)
	}
	return nil
}

// k6ConfigPath is where k6 keeps its configuration, `k6 cloud login` included.
func k6ConfigPath(getenv func(string) string) string {
	if p := getenv("K6_CONFIG"); p != "" {
		return p
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "k6", "config.json")
	}
	return filepath.Join(getenv("HOME"), ".config", "k6", "config.json")
}

type cloudCredentials struct {
	Token   string `json:"token"`
	StackID int64  `json:"stackID"`
}

// savedCloudLogin reads collectors.cloud of k6's configuration file; none is no login.
func savedCloudLogin(path string) (cloudCredentials, error) {
	var conf struct {
		Collectors struct {
			Cloud cloudCredentials `json:"cloud"`
		} `json:"collectors"`
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cloudCredentials{}, nil
	}
	if err != nil {
		return cloudCredentials{}, fmt.Errorf("k6's configuration %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		return cloudCredentials{}, fmt.Errorf("k6's configuration %s is not k6's JSON: %w", path, err)
	}
	return conf.Collectors.Cloud, nil
}

// cloudRun hands a portable scenario to k6 cloud.
func cloudRun(ctx context.Context, k6, script string, set map[string]string, extra []string) error {
	cmd := exec.CommandContext(ctx, k6, cloudArgs(os.Environ(), set, extra, script)...)
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("k6 cloud run %s: %w", filepath.Base(script), err)
	}
	return nil
}

// cloudArgs is `k6 cloud run` with the script's variables of environ as -e flags (a cloud run
// sees no other environment), set overriding environ, and nothing about this machine.
func cloudArgs(environ []string, set map[string]string, extra []string, script string) []string {
	var env []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if _, over := set[k]; !over && !slices.Contains(runner.LocalEnv, k) && (k != "TARGET" || v != "all") {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if set[k] != "" {
			env = append(env, k+"="+set[k])
		}
	}
	return append(append(append([]string{"cloud", "run"}, runner.ScriptFlags(env)...), extra...), script)
}
