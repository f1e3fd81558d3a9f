package main

// `make k8s`: one scenario as a k6-operator TestRun split PARALLELISM ways, with the ConfigMap
// holding its k6 archive. Nothing is applied here: there is no cluster on this machine, and the
// user's kubectl, context and namespace are theirs to choose (k8s/README.md).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
)

// The TestRun API followed: grafana/k6-operator's api/v1alpha1 (testrun_types.go) and
// docs/crd-generated.md. k8s/testrun.schema.json names the same version.
const (
	operatorVersion = "v1.1.1"
	testRunAPI      = "k6.io/v1alpha1"
	// archiveKey is the ConfigMap key, and so the file under /test/ the operator runs.
	archiveKey = "archive.tar"
	// configMapLimit is Kubernetes' limit on a ConfigMap's data, which the operator's docs repeat
	// for scripts: larger archives need a volumeClaim.
	configMapLimit = 1 << 20
	// maxParallelism is spec.parallelism's type, int32.
	maxParallelism = 1<<31 - 1
	// maxNameLen keeps the operator's derived names valid: it labels every pod k6_cr=<name> (a
	// label value: 63 at most) and names services <name>-service-<index>.
	maxNameLen = 40
)

// podSummary is SUMMARY_JSON on the runners. Without it the scripts write their result to
// results/<testid>/ under the working directory, which no pod has (k6 cannot make directories),
// and every runner would end with "failed to handle the end-of-test summary". /tmp is in every
// image; the file goes with the pod (the text summary stays in the pod's log).
const podSummary = "/tmp/proxybench-result.json"

// shellSafeRE is what a --tag argument may hold: the operator splits spec.arguments at spaces
// and its initializer runs them through `sh -c` (k6 archive … <arguments>).
var shellSafeRE = regexp.MustCompile(`^[A-Za-z0-9_.:,@%+/=-]+$`)

// k8sTargetRE is a TARGET name for a remote target: a tag value (shellSafeRE) and a label.
var k8sTargetRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

type k8sFlags struct {
	scenario, proto, profile, testid string
	parallelism                      int
	image, targetURL, target         string
	influxURL, out, client           string
	separate                         bool
}

// parseK8sFlags reads and checks everything `make k8s` is given, before k6 runs; every error
// names the variable at fault, and all of them are reported at once.
func parseK8sFlags(args []string) (*k8sFlags, error) {
	fs := flag.NewFlagSet("k8s", flag.ContinueOnError)
	f := &k8sFlags{}
	var parallelism string
	fs.StringVar(&f.scenario, "scenario", os.Getenv("SCENARIO"), "scenario: a file of scenarios/ without .js")
	fs.StringVar(&parallelism, "parallelism", os.Getenv("PARALLELISM"), "k6 runners the test is split over (spec.parallelism)")
	fs.StringVar(&f.image, "image", os.Getenv("IMAGE"), "the runner image: our bin/k6 (k8s/runner.Dockerfile)")
	fs.StringVar(&f.targetURL, "target-url", os.Getenv("TARGET_URL"), "the target's base URL as the cluster reaches it")
	fs.StringVar(&f.target, "target", os.Getenv("TARGET"), "the target's name in tags and results (default: TARGET_URL's host)")
	fs.StringVar(&f.influxURL, "influxdb-url", os.Getenv("INFLUXDB_URL"), "every runner streams to this InfluxDB (--out proxybench-influxdb=URL)")
	fs.StringVar(&f.proto, "proto", os.Getenv("PROTO"), "probes only: h1, h1c, h2 or h3 (default: the probe's own)")
	fs.StringVar(&f.profile, "profile", envOr("PROFILE", scenarios.DefaultProfile()), strings.Join(scenarios.ProfileNames(), ", "))
	fs.StringVar(&f.testid, "testid", os.Getenv("TESTID"), "the testid tag (default: a timestamp)")
	fs.BoolVar(&f.separate, "separate", false, "one runner per node (spec.separate): no two runners share a node's CPUs")
	fs.StringVar(&f.out, "out", "", "directory for the manifests (default: run/k8s/<testid>/<scenario>[-<proto>])")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: k8s takes flags only (the k6 arguments it writes are in the TestRun)", fs.Args())
	}
	f.scenario, f.proto = strings.TrimSpace(f.scenario), strings.TrimSpace(f.proto)
	f.image, f.targetURL = strings.TrimSpace(f.image), strings.TrimSpace(f.targetURL)
	f.target, f.influxURL = strings.TrimSpace(f.target), strings.TrimSpace(f.influxURL)
	if f.target == "all" {
		f.target = "" // the Makefile's default for `make k6`, not a name
	}
	if f.testid == "" {
		f.testid = time.Now().Format("20060102-150405")
	}

	var errs []error
	if f.scenario == "" {
		errs = append(errs, errors.New("no SCENARIO: try `make k8s SCENARIO=reused-h2 …`; scenarios are "+strings.Join(scenarioNames(), ", ")))
	} else if _, err := k6Cells(f.scenario, f.proto); err != nil {
		errs = append(errs, err)
	}
	if n, err := strconv.ParseUint(strings.TrimSpace(parallelism), 10, 64); err != nil || !countRE.MatchString(strings.TrimSpace(parallelism)) || n < 1 || n > maxParallelism {
		errs = append(errs, fmt.Errorf("PARALLELISM=%q: want a whole number of at least 1 (the k6 runners the test is split over; at most %d)", parallelism, maxParallelism))
	} else {
		f.parallelism = int(n)
	}
	if f.image == "" {
		errs = append(errs, errors.New("no IMAGE: give the runner image, our bin/k6 built from k8s/runner.Dockerfile and pushed where the cluster pulls from (make k8s IMAGE=registry.example/proxybench-k6:v1 …)"))
	} else if strings.ContainsAny(f.image, " \t\n\"'") {
		errs = append(errs, fmt.Errorf("IMAGE=%q: an image reference has no spaces or quotes", f.image))
	}
	if err := checkTargetURL(f.targetURL); err != nil {
		errs = append(errs, err)
	}
	if f.target != "" && !k8sTargetRE.MatchString(f.target) {
		errs = append(errs, fmt.Errorf("TARGET=%q: a remote target's name is letters, digits, \".\", \"_\" or \"-\", 63 at most (it is a tag on every sample; empty: TARGET_URL's host)", f.target))
	}
	if f.influxURL != "" {
		if err := checkInfluxURL(f.influxURL); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := scenarios.ProfileNamed(f.profile); err != nil {
		errs = append(errs, err)
	}
	if !testidRE.MatchString(f.testid) {
		errs = append(errs, fmt.Errorf("TESTID %q: letters, digits, \".\", \"_\" or \"-\", 128 at most", f.testid))
	}
	if err := checkKnobs(os.Getenv); err != nil {
		errs = append(errs, err)
	}
	var err error
	if f.client, err = runner.ParseClient(os.Getenv("CLIENT")); err != nil {
		errs = append(errs, err)
	}
	return f, errors.Join(errs...)
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

// cellName is the cell the manifests are of: a probe with PROTO adds it, as the runner names results.
func (f *k8sFlags) cellName() string {
	if f.proto != "" {
		return f.scenario + "-" + f.proto
	}
	return f.scenario
}

// env is what every runner gets, and `k6 archive` as -e: the variables the scripts read
// (runner.ScriptEnv) that the user set, and those a runner needs.
func (f *k8sFlags) env(getenv func(string) string) [][2]string {
	given := map[string]string{
		"TARGET_URL": f.targetURL, "TARGET": f.target, "PROFILE": f.profile, "PROTO": f.proto, "TESTID": f.testid,
	}
	var env [][2]string
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
			env = append(env, [2]string{k, v})
		}
	}
	if f.parallelism > 1 {
		// each runner does its share of the plan: the scripts then leave the plan's totals
		// (fresh: all REQUESTS; reused: the connections allowed) out of every runner's
		// thresholds, which its share alone would fail (scenarios/lib/options.js segmented())
		env = append(env, [2]string{"SEGMENTS", strconv.Itoa(f.parallelism)})
	}
	env = append(env, [2]string{"SUMMARY_JSON", podSummary})
	godebug := strings.TrimSpace(getenv("GODEBUG"))
	if (runner.Job{Scenario: f.scenario, Proto: f.proto}).H1OverTLS() {
		// the process must have it (runner.Env does the same): Go's client offers h2 by ALPN
		// otherwise, and k6 has no switch per request
		godebug = strings.Trim(godebug+",http2client=0", ",")
	}
	if godebug != "" {
		env = append(env, [2]string{"GODEBUG", godebug})
	}
	return env
}

// offlineEnv keeps every k6 here and on the runners off the internet.
var offlineEnv = [][2]string{{"K6_NO_USAGE_REPORT", "true"}, {"K6_AUTO_EXTENSION_RESOLUTION", "false"}}

var notDNSRE = regexp.MustCompile(`[^a-z0-9]+`)

// k8sName is the TestRun's and ConfigMap's name: a DNS label made of the cell and the testid,
// cut to maxNameLen with a hash of the whole so that two long testids stay apart.
func k8sName(cell, testid string) string {
	full := "proxybench-" + cell + "-" + testid
	name := strings.Trim(notDNSRE.ReplaceAllString(strings.ToLower(full), "-"), "-")
	if len(name) <= maxNameLen && name == full {
		return name
	}
	sum := sha256.Sum256([]byte(full))
	h := hex.EncodeToString(sum[:])[:6]
	if len(name) > maxNameLen-7 {
		name = strings.TrimRight(name[:maxNameLen-7], "-")
	}
	return name + "-" + h
}

// inspected is what `k6 inspect --execution-requirements` says of the archive that we use.
type inspected struct {
	Tags   map[string]string `json:"tags"`
	MaxVUs int               `json:"maxVUs"`
}

// k8sArgs is spec.arguments. The operator adds `--tag instance_id=<i> --tag testrun_name=…` to
// every runner's command, and a --tag given on k6's command line replaces the script's
// options.tags instead of adding to them (k6 v2.2): the scripts' test-wide tags (testid,
// target, mode) would be gone from every sample. So they are given again here, as flags.
func k8sArgs(tags map[string]string, influxURL string) (string, error) {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		a := k + "=" + tags[k]
		if !shellSafeRE.MatchString(a) {
			return "", fmt.Errorf("the script's tag %s=%q cannot be passed on the operator's command line (its initializer runs it through sh -c): letters, digits and _.:,@%%+/=- only", k, tags[k])
		}
		args = append(args, "--tag", a)
	}
	if influxURL != "" {
		args = append(args, "--out", "proxybench-influxdb="+influxURL)
	}
	return strings.Join(args, " "), nil
}

// Kubernetes objects, only the fields written. Field order is the YAML's order.
type (
	objectMeta struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	envVar struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	configMap struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   objectMeta        `json:"metadata"`
		BinaryData map[string][]byte `json:"binaryData"` // encoding/json writes []byte as base64, as the API wants
	}
	testRun struct {
		APIVersion string      `json:"apiVersion"`
		Kind       string      `json:"kind"`
		Metadata   objectMeta  `json:"metadata"`
		Spec       testRunSpec `json:"spec"`
	}
	testRunSpec struct {
		Parallelism int    `json:"parallelism"`
		Separate    bool   `json:"separate,omitempty"`
		Script      script `json:"script"`
		Arguments   string `json:"arguments,omitempty"`
		Runner      pod    `json:"runner"`
		Cleanup     string `json:"cleanup,omitempty"` // "post" or none
	}
	script struct {
		ConfigMap struct {
			Name string `json:"name"`
			File string `json:"file"`
		} `json:"configMap"`
	}
	pod struct {
		Image string   `json:"image"`
		Env   []envVar `json:"env"`
	}
)

// k8sManifests are the two objects of one `make k8s`.
type k8sManifests struct {
	ConfigMap configMap
	TestRun   testRun
}

// buildManifests makes the objects from the archive and what inspecting it said.
func buildManifests(f *k8sFlags, archive []byte, in inspected, env [][2]string) (*k8sManifests, error) {
	if len(archive) > configMapLimit {
		return nil, fmt.Errorf("the k6 archive of %s is %d bytes, over a ConfigMap's %d: it would need a volumeClaim (k8s/README.md)", f.scenario, len(archive), configMapLimit)
	}
	if in.MaxVUs > 0 && f.parallelism > in.MaxVUs {
		more := " (more with CONNECTIONS or FRESH_CONNECTIONS)"
		if runner.IsProbe(f.scenario) {
			more = ": a probe samples on one connection; on the operator it still runs from the cluster's machines"
		}
		return nil, fmt.Errorf("PARALLELISM=%d is more than the %d VU(s) %s runs at most: %d of the runners would have no VU and run setup() alone; give PARALLELISM=%d at most%s", f.parallelism, in.MaxVUs, f.cellName(), f.parallelism-in.MaxVUs, in.MaxVUs, more)
	}
	args, err := k8sArgs(in.Tags, f.influxURL)
	if err != nil {
		return nil, err
	}
	name := k8sName(f.cellName(), f.testid)
	meta := objectMeta{
		Name:   name,
		Labels: map[string]string{"app.kubernetes.io/part-of": "proxybench", "proxybench/scenario": f.scenario},
		// annotations: a testid can be longer than a label value may be
		Annotations: map[string]string{"proxybench/testid": f.testid, "proxybench/target-url": f.targetURL},
	}
	m := &k8sManifests{
		ConfigMap: configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: meta, BinaryData: map[string][]byte{archiveKey: archive}},
		TestRun:   testRun{APIVersion: testRunAPI, Kind: "TestRun", Metadata: meta},
	}
	s := &m.TestRun.Spec
	s.Parallelism = f.parallelism
	s.Separate = f.separate
	s.Script.ConfigMap.Name, s.Script.ConfigMap.File = name, archiveKey
	s.Arguments = args
	s.Runner.Image = f.image
	for _, kv := range slices.Concat(offlineEnv, env) {
		s.Runner.Env = append(s.Runner.Env, envVar{kv[0], kv[1]})
	}
	if f.influxURL != "" {
		// once the test is over the operator deletes the TestRun and all it made (jobs, pods,
		// their logs); the ConfigMap is ours and stays. Without InfluxDB the runners' logs are
		// all that is kept of the run, so the pods stay until the TestRun is deleted.
		s.Cleanup = "post"
	}
	return m, nil
}

func cmdK8s(ctx context.Context, args []string) error {
	f, err := parseK8sFlags(args)
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join(envPath("PROXYBENCH_RUN", filepath.Join(root, "run")), "k8s", f.testid, f.cellName())
	}
	// split over runners (execution segments), a fresh cell runs its k6/http script (runner.Script)
	r := &runner.Runner{ScenariosDir: filepath.Join(root, "scenarios"), Client: f.client, Segments: f.parallelism}
	scriptPath, err := r.Script(f.scenario)
	if err != nil {
		return err
	}
	k6 := envOr("K6", filepath.Join(root, "bin", "k6"))
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fail := func(err error) error {
		if os.IsNotExist(statErr) {
			_ = os.RemoveAll(dir) // no half-made folder that kubectl apply -f could be pointed at
		}
		return err
	}
	env := f.env(os.Getenv)
	archivePath := filepath.Join(dir, archiveKey)
	archive, in, err := archiveAndInspect(ctx, k6, scriptPath, archivePath, env)
	if err != nil {
		return fail(err)
	}
	m, err := buildManifests(f, archive, in, env)
	if err != nil {
		return fail(err)
	}
	for _, doc := range []struct {
		file string
		v    any
		head string
	}{
		{"configmap.yaml", m.ConfigMap, fmt.Sprintf("the k6 archive of %s (bin/k6 archive), for the TestRun of testrun.yaml", relTo(r.ScenariosDir, scriptPath))},
		{"testrun.yaml", m.TestRun, fmt.Sprintf("%s against %s, split %d ways on the k6-operator (TestRun %s, operator %s)", f.cellName(), f.targetURL, f.parallelism, testRunAPI, operatorVersion)},
	} {
		data, err := toYAML(doc.v)
		if err != nil {
			return fail(err)
		}
		head := "# Made by `make k8s` (proxybench k8s): " + doc.head + ".\n# kubectl apply -f " + dir + "/  (k8s/README.md)\n"
		if err := os.WriteFile(filepath.Join(dir, doc.file), append([]byte(head), data...), 0o644); err != nil {
			return fail(err)
		}
	}
	fmt.Printf("k8s: %s split %d ways against %s (testid %s, %d VUs at most, archive %d bytes)\n", f.cellName(), f.parallelism, f.targetURL, f.testid, in.MaxVUs, len(archive))
	fmt.Printf("  %s/configmap.yaml  the k6 archive (ConfigMap %s)\n  %s/testrun.yaml    the TestRun (image %s)\n", dir, m.ConfigMap.Metadata.Name, dir, f.image)
	fmt.Printf("apply both: kubectl apply -f %s/   follow: kubectl get testrun %s -w\n", dir, m.TestRun.Metadata.Name)
	if f.influxURL == "" {
		fmt.Printf("no INFLUXDB_URL: each runner's summary is in its own log only, which cleanup: post deletes with the pods at the end (follow them: kubectl logs -f -l k6_cr=%s,runner=true --prefix); give INFLUXDB_URL to see the split run as one in the dashboards\n", m.TestRun.Metadata.Name)
	}
	return nil
}

// relTo is path under dir as scenarios/… names it, or path itself.
func relTo(dir, path string) string {
	if rel, err := filepath.Rel(filepath.Dir(dir), path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// archiveAndInspect runs `k6 archive` with env as -e, as the runners will run it, then
// `k6 inspect --execution-requirements` on the archive from another directory, as the
// operator's initializer does in the cluster: a script that cannot run there stops here.
func archiveAndInspect(ctx context.Context, k6, scriptPath, archivePath string, env [][2]string) ([]byte, inspected, error) {
	args := []string{"archive"}
	for _, kv := range env {
		args = append(args, "-e", kv[0]+"="+kv[1])
	}
	args = append(args, "-O", archivePath, scriptPath)
	if _, err := runK6(ctx, k6, "", args...); err != nil {
		return nil, inspected{}, fmt.Errorf("k6 archive %s: %w", filepath.Base(scriptPath), err)
	}
	archive, err := os.ReadFile(archivePath)
	if err != nil {
		return nil, inspected{}, err
	}
	// the archive must stand alone: nothing of this clone is at hand in a pod
	out, err := runK6(ctx, k6, os.TempDir(), "inspect", "--execution-requirements", archivePath)
	if err != nil {
		return nil, inspected{}, fmt.Errorf("k6 inspect --execution-requirements of the archive: %w", err)
	}
	var in inspected
	if err := json.Unmarshal(out, &in); err != nil {
		return nil, inspected{}, fmt.Errorf("k6 inspect --execution-requirements of the archive printed no JSON: %w", err)
	}
	return archive, in, nil
}

// runK6 runs k6 offline, its environment cleared of what could make it reach out or read this
// machine's files instead of the archive's.
func runK6(ctx context.Context, k6, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, k6, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, kv := range offlineEnv {
		cmd.Env = append(cmd.Env, kv[0]+"="+kv[1])
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, k6Message(stderr.String()))
	}
	return stdout.Bytes(), nil
}

var k6ErrorRE = regexp.MustCompile(`level=error msg=("(?:[^"\\]|\\.)*")`)

// k6Message is what k6's log says went wrong: the script's own message (scenarios/lib throws
// ones that say what to do), without the logfmt quoting and the JavaScript stack under it.
func k6Message(stderr string) string {
	var msgs []string
	for _, m := range k6ErrorRE.FindAllStringSubmatch(stderr, -1) {
		msg, err := strconv.Unquote(m[1])
		if err != nil {
			continue
		}
		msg, _, _ = strings.Cut(msg, "\n\tat ")
		msgs = append(msgs, strings.TrimPrefix(strings.TrimSpace(msg), "Error: "))
	}
	if len(msgs) == 0 {
		return strings.TrimSpace(stderr)
	}
	return strings.Join(msgs, "; ")
}
