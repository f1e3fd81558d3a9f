package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// engine is a private Docker engine (docker/engine.sh) and the CLI pointed at it.
type engine struct {
	docker string   // the docker CLI docker/install.sh installed (20.10, with the compose plugin)
	env    []string // DOCKER_HOST and DOCKER_CONFIG of this engine
	stop   func()   // stops dockerd, once: its data root is free for another engine then
}

// startEngine starts dockerd for this test and stops it at the end; the test is skipped, with
// the reason, where no engine can run (engine.sh's exit status 3).
func startEngine(t *testing.T, root string) *engine {
	t.Helper()
	return startEngineIn(t, root, nil)
}

// startEngineIn is startEngine with dockerd, its containerd and so every container on the
// host's network inside ns's network namespace, pinned to its CPU (ns nil: this host's). It
// enters the namespace by nsenter, not `ip netns exec`, which would mount a sysfs of its own
// over /sys and hide the cgroup hierarchies runc needs.
func startEngineIn(t *testing.T, root string, ns *nsHost) *engine {
	t.Helper()
	cache, err := stack.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	// the socket's path must fit a unix address (108 bytes): not under t.TempDir()'s long name
	dir, err := os.MkdirTemp("", "pb-engine-") //nolint:usetesting // see above
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "docker", "engine.sh")
	var stderr bytes.Buffer
	cmd := exec.Command("bash", script, "start", dir)
	if ns != nil {
		cmd = exec.Command("nsenter", "--net=/run/netns/"+ns.Name, "taskset", "-c", strconv.Itoa(ns.CPU), "bash", script, "start", dir)
	}
	cmd.Env = append(os.Environ(), "PROXYBENCH_CACHE="+cache)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) && exit.ExitCode() == 3 {
		t.Skipf("no Docker engine can start here: %s", strings.TrimSpace(stderr.String()))
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stop := exec.Command("bash", script, "stop", dir)
			stop.Env = cmd.Env
			if out, err := stop.CombinedOutput(); err != nil {
				t.Errorf("engine.sh stop: %v\n%s", err, out)
			}
			_ = os.RemoveAll(dir)
		})
	}
	t.Cleanup(stop)
	if err != nil {
		t.Fatalf("engine.sh start: %v\n%s", err, stderr.String())
	}
	return &engine{docker: filepath.Join(cache, "bin", "docker"), env: strings.Split(strings.TrimSpace(string(out)), "\n"), stop: stop}
}

// run runs the docker CLI against the engine; its output is returned whole.
func (e *engine) run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, e.docker, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), e.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// TestComposeUnderDocker runs compose.yaml under a real Docker engine, as a Docker user would:
// the image built from the repository's own Dockerfile (on base images made here from
// Debian's packages and the Go module proxy, since no image registry is reachable), the stack
// brought up with `docker compose up --wait` on the test's ports, verified and adopted as
// `make compose-up` does, measured with a reused and a fresh scenario and the five probes,
// a probe run by the compose k6 service streaming into InfluxDB, runs of the k6 service
// against two targets sharing the stack's testid, and brought down leaving no container,
// network or volume behind; then the same image under compose.bridge.yaml (bridge
// networking, as on Docker Desktop): up --wait, its published ports verified from the host, a
// reused and a probe scenario by the k6 service reaching the targets by name, the reused cell
// set beside the host network's; then the host network's stack as the stack host of two
// (composeStackHost). `make test-compose` runs it (part of `make test`).
func TestComposeUnderDocker(t *testing.T) {
	h := harnessAt(t, 2300, os.Getenv("E2E_TARGETS"))
	e := startEngine(t, h.root)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	t.Cleanup(cancel) // after compose down: cleanups run last-registered first

	// the base images: made once, kept in the engine's data root under the install cache
	cache, _ := stack.CacheDir()
	base := exec.CommandContext(ctx, "bash", filepath.Join(h.root, "docker", "base-images.sh"))
	base.Env = append(append(os.Environ(), "PROXYBENCH_CACHE="+cache), e.env...)
	var baseErr bytes.Buffer
	base.Stderr = &baseErr
	out, err := base.Output()
	if err != nil {
		t.Fatalf("docker/base-images.sh: %v\n%s", err, baseErr.String())
	}
	build := []string{"build", "--network", "host", "-t", "proxybench:local"}
	for _, arg := range strings.Fields(string(out)) {
		build = append(build, "--build-arg", arg)
	}
	t0 := time.Now()
	// BuildKit, which Docker 20.10 runs when asked: the Dockerfile's cache mounts need it
	if out, err := e.run(ctx, h.root, []string{"DOCKER_BUILDKIT=1"}, append(build, ".")...); err != nil {
		t.Fatalf("%v\n%s", err, stack.LastLines(out, 40))
	}
	// the image's k6 is built as make builds it: through xk6 when the test was given one
	// (base-images.sh made XK6_IMAGE of it), with go build otherwise
	version, err := e.run(ctx, h.root, nil, "run", "--rm", "--network", "none", "--entrypoint", "/proxybench/bin/k6", "proxybench:local", "version")
	if err != nil {
		t.Fatalf("bin/k6 version in the image: %v\n%s", err, version)
	}
	if got, want := parseK6Version(t, version).builtWithXk6(), os.Getenv("XK6_BIN") != ""; got != want {
		t.Errorf("the image's k6 built with xk6: %v, want %v (XK6_BIN=%q)\n%s", got, want, os.Getenv("XK6_BIN"), version)
	}
	size, _ := e.run(ctx, h.root, nil, "image", "inspect", "-f", "{{.Size}}", "proxybench:local")
	mb, _ := strconv.ParseFloat(strings.TrimSpace(size), 64)
	t.Logf("image proxybench:local built in %v (%s), %.0f MB", time.Since(t0).Round(time.Second), strings.Join(build[5:], " "), mb/1e6)

	// The test's ports and directories, through an override file as a user would add one:
	// targets.json moved by the harness, the certificates and the stack's testid in the
	// harness's run directory.
	if err := os.MkdirAll(h.results, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"certs", "compose"} {
		if err := os.MkdirAll(filepath.Join(h.run, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var profiles []string
	if slices.Contains(h.cfg.Names(), "godoxy") && os.Getenv("GODOXY_BIN") != "" {
		profiles = []string{"COMPOSE_PROFILES=godoxy"} // make test gives GoDoxy when a binary is at hand
	}
	host := h.composeStack(ctx, t, e, "proxybench-e2e", profiles, false)
	host.up()

	// adopted as `make compose-up` adopts it: every target verified over each protocol
	if out, err := h.proxybench(t, "attach"); err != nil {
		t.Fatalf("proxybench attach: %v\n%s", err, out)
	} else {
		t.Log(out)
	}
	h.loadServed(t)
	st := readState(t, h.run)
	for _, n := range h.cfg.Names() {
		if _, ok := st.Targets[n]; !ok && st.Missing[n] == "" {
			t.Errorf("target %s: neither attached nor missing", n)
		}
	}

	// measured from the host, as after `make compose-up`
	for _, scenario := range []string{"reused-h2", "fresh-h2", "json", "upload", "stream", "sse", "ws"} {
		testid := "e2e-docker-" + scenario
		out, err := h.proxybench(t, "k6", "-scenario", scenario, "-targets", "all", "-testid", testid)
		if err != nil {
			t.Errorf("k6 %s against the compose stack: %v\n%s", scenario, err, stack.LastLines(out, 20))
			continue
		}
		n := 0
		for _, r := range loadResults(t, filepath.Join(h.results, testid)) {
			if r.Skipped == "" {
				checkResult(t, scenario, r)
				n++
				rps := "no rate (a probe)"
				if r.RPS != nil {
					rps = fmt.Sprintf("%.0f req/s", *r.RPS)
				}
				t.Logf("%s/%s/%s: %v requests, %s, p50 %.2f ms, p99 %.2f ms", scenario, r.Target, r.Proto, r.Requests, rps, r.Latency.P50, r.Latency.P99)
			}
		}
		if n == 0 {
			t.Errorf("%s: no cell measured", scenario)
		}
	}

	// the compose k6 service, as `docker compose run --rm k6 run scenarios/sse.js`, streaming
	// into InfluxDB while it answers (here the native one on the test's port)
	h.streamToInfluxDB(t)
	addr := strings.TrimPrefix(h.influx.URL(), "http://")
	testid := "e2e-docker-k6-service"
	runOut, err := host.compose("run", "--rm", "-e", "TARGET=nginx", "-e", "TESTID="+testid, "-e", "INFLUXDB_ADDR="+addr,
		"k6", "run", "--quiet", "scenarios/sse.js")
	if err != nil && slices.Contains(h.cfg.Names(), "nginx") {
		t.Fatalf("docker compose run k6: %v\n%s", err, stack.LastLines(runOut, 30))
	}
	if slices.Contains(h.cfg.Names(), "nginx") {
		if !strings.Contains(runOut, "streaming into InfluxDB at "+addr) {
			t.Errorf("the k6 service did not stream into InfluxDB at %s:\n%s", addr, stack.LastLines(runOut, 10))
		}
		// the result lands in the host's results/<testid>/, as with make k6
		results := loadResults(t, filepath.Join(h.results, testid))
		if len(results) != 1 {
			t.Fatalf("the k6 service wrote %d results in results/%s/, want 1:\n%s", len(results), testid, stack.LastLines(runOut, 10))
		}
		r := results[0]
		checkResult(t, "sse", r)
		h.checkInfluxDB(t, testid, runner.K6Scenario("sse", r.Proto), results)
	}
	if slices.Contains(h.cfg.Names(), "nginx") { // the k6 service's cells are nginx's
		h.composeBridge(ctx, t, e, host, profiles)
	}
	host.close()

	// the same stack as the stack host of two (issue 40), under an engine in its namespace
	e.stop()
	t.Run("stack host", func(t *testing.T) { h.composeStackHost(ctx, t, profiles) })
}

// composeBridge runs the k6 service against the host network's stack, then brings up the
// bridge variant and does the same, and sets the two reused cells side by side.
func (h *harness) composeBridge(ctx context.Context, t *testing.T, e *engine, host *composeStack, profiles []string) {
	// One comparison per stack: runs of the k6 service that name no testid, against two
	// targets, land under the stack's; the reused cell is the host-network figure of the NAT
	// comparison below.
	hostCells := host.k6Service(t, "reused-h2", "json")
	host.down()

	// The bridge variant (compose.bridge.yaml), as on Docker Desktop: each service on the
	// project's network, the same ports published on 127.0.0.1 (verified from the host by
	// attach, over every protocol: TCP and UDP), and the k6 service reaching nginx by name.
	bridge := h.composeStack(ctx, t, e, "proxybench-e2e-bridge", profiles, true)
	defer bridge.close()
	bridge.up()
	if out, err := h.proxybench(t, "attach"); err != nil {
		t.Errorf("proxybench attach (the published ports, from the host): %v\n%s", err, out)
	}
	bridgeCells := bridge.k6Service(t, "reused-h2", "json")
	if bridge.testid == host.testid {
		t.Errorf("the bridge stack took the host stack's testid %s: each stack that comes up has its own", host.testid)
	}
	// what bridge networking costs, the same cell measured both ways (one run each: noisy on
	// a shared machine; docker/README.md has the repeated figures)
	hr, br := hostCells["reused-h2"], bridgeCells["reused-h2"]
	if hr != nil && br != nil && hr.RPS != nil && br.RPS != nil {
		t.Logf("bridge/host, reused-h2 against nginx by the k6 service: req/s %.0f/%.0f = %.2f, p99 %.1f/%.1f ms = %.2f",
			*br.RPS, *hr.RPS, *br.RPS / *hr.RPS, br.Latency.P99, hr.Latency.P99, br.Latency.P99/hr.Latency.P99)
	}
}

// composeStack is one compose project of the test: compose.yaml, with compose.bridge.yaml when
// bridge, and an override of the test's own (its ports, certificates, results, targets file),
// run with env (the profiles, STACK_LISTEN) added to the environment.
type composeStack struct {
	t       *testing.T
	h       *harness
	e       *engine
	project string
	compose func(args ...string) (string, error)
	testid  string // the stack's, once up
	closed  bool
}

func (h *harness) composeStack(ctx context.Context, t *testing.T, e *engine, project string, env []string, bridge bool) *composeStack {
	t.Helper()
	files := []string{"compose.yaml"}
	if bridge {
		files = bridgeFiles
	}
	p := loadComposeFiles(t, h.root, files)
	services := []string{"certs", "k6"}
	for _, n := range p.ServiceNames() {
		if slices.Contains(h.cfg.Names(), n) {
			services = append(services, n)
		}
	}
	var override strings.Builder
	override.WriteString("services:\n")
	for _, n := range services {
		fmt.Fprintf(&override, "  %s:\n    environment:\n      TARGETS_FILE: /proxybench/test-targets.json\n"+
			"    volumes:\n      - %s:/proxybench/test-targets.json:ro\n      - %s:%s/certs\n", n, h.targets, filepath.Join(h.run, "certs"), imageRun)
		if n == "k6" || n == stack.Direct {
			fmt.Fprintf(&override, "      - %s:%s/compose\n", filepath.Join(h.run, "compose"), imageRun)
		}
		if n == "k6" {
			fmt.Fprintf(&override, "      - %s:/proxybench/results\n", h.results)
		}
		if ports, ok := h.cfg.Targets[n]; ok && bridge {
			// the test's ports, in place of compose.bridge.yaml's (targets.json's)
			override.WriteString("    ports: !override\n")
			for _, port := range []string{fmt.Sprintf("%d/tcp", ports.TLS), fmt.Sprintf("%d/udp", ports.TLS), fmt.Sprintf("%d/tcp", ports.H1C)} {
				fmt.Fprintf(&override, "      - 127.0.0.1:%s:%s\n", strings.Split(port, "/")[0], port)
			}
			if ports.Admin != 0 {
				fmt.Fprintf(&override, "      - 127.0.0.1:%d:%d/tcp\n", ports.Admin, ports.Admin)
			}
		}
	}
	overrideFile := filepath.Join(t.TempDir(), "compose.test.yaml")
	if err := os.WriteFile(overrideFile, []byte(override.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"compose", "-p", project}
	for _, f := range append(files, overrideFile) {
		args = append(args, "-f", f)
	}
	c := &composeStack{t: t, h: h, e: e, project: project}
	c.compose = func(more ...string) (string, error) {
		return e.run(ctx, h.root, env, append(slices.Clone(args), more...)...)
	}
	t.Cleanup(c.close)
	if out, err := c.compose("--profile", "godoxy", "--profile", "k6", "down", "--volumes"); err != nil {
		t.Fatalf("%s: what an earlier run left: %v\n%s", project, err, out)
	}
	return c
}

// up is `docker compose up --wait`: every service healthy, and the stack's testid written.
func (c *composeStack) up() {
	t := c.t
	t.Helper()
	t0 := time.Now()
	if out, err := c.compose("up", "--wait", "--no-build"); err != nil {
		logs, _ := c.compose("logs", "--no-color", "--tail", "30")
		t.Fatalf("%s: %v\n%s\n%s", c.project, err, stack.LastLines(out, 30), logs)
	}
	t.Logf("%s: docker compose up --wait returned in %v", c.project, time.Since(t0).Round(100*time.Millisecond))
	ps, _ := c.compose("ps", "--format", "{{.Service}} {{.Status}}")
	for _, line := range strings.Split(strings.TrimSpace(ps), "\n") {
		if !strings.Contains(line, "(healthy)") {
			t.Errorf("%s: after up --wait, a service is not healthy: %s", c.project, line)
		}
	}
	data, err := os.ReadFile(filepath.Join(c.h.run, "compose", "testid"))
	c.testid = strings.TrimSpace(string(data))
	if err != nil || !strings.HasPrefix(c.testid, "compose-") {
		t.Errorf("%s: the direct service wrote no testid of the stack in run/compose/testid (%q, %v)", c.project, c.testid, err)
	}
}

// close brings the project down, if still up, and checks that nothing of it is left, once:
// before its engine stops.
func (c *composeStack) close() {
	if c.closed {
		return
	}
	c.closed = true
	c.down()
	checkNothingLeft(c.t, c.e, c.project)
}

func (c *composeStack) down() {
	if out, err := c.compose("--profile", "godoxy", "--profile", "k6", "down", "--volumes", "--timeout", "10"); err != nil {
		c.t.Errorf("%s: %v\n%s", c.project, err, out)
	}
}

// k6Service runs each scenario with `docker compose run --rm -e TARGET=… k6 run`, naming no
// testid: the first against nginx, the others against direct, so that two targets' runs
// share the stack's testid, one results/<testid>/ and one comparison. It returns each
// scenario's measured cell.
func (c *composeStack) k6Service(t *testing.T, scenarios ...string) map[string]*result.Result {
	t.Helper()
	want := map[string]string{} // scenario/target (a result's) → scenario
	for i, scenario := range scenarios {
		target := "nginx"
		if i > 0 {
			target = stack.Direct
		}
		out, err := c.compose("run", "--rm", "-e", "TARGET="+target, "-e", "INFLUXDB_ADDR=127.0.0.1:1",
			"k6", "run", "--quiet", "scenarios/"+scenario+".js")
		if err != nil {
			t.Errorf("%s: docker compose run k6 %s against %s: %v\n%s", c.project, scenario, target, err, stack.LastLines(out, 30))
			continue
		}
		if !strings.Contains(out, "k6: testid "+c.testid+" (the stack's") {
			t.Errorf("%s: the k6 service did not take the stack's testid %s:\n%s", c.project, c.testid, stack.LastLines(out, 10))
		}
		want[scenario+"/"+target] = scenario
	}
	cells := map[string]*result.Result{} // by scenario
	for _, r := range loadResults(t, filepath.Join(c.h.results, c.testid)) {
		scenario, ok := want[r.Scenario+"/"+r.Target]
		if !ok {
			continue
		}
		checkResult(t, scenario, r)
		rps := "no rate (a probe)"
		if r.RPS != nil {
			rps = fmt.Sprintf("%.0f req/s", *r.RPS)
		}
		t.Logf("%s: k6 service %s/%s/%s: %v requests, %s, p50 %.2f ms, p99 %.2f ms", c.project, r.Scenario, r.Target, r.Proto, r.Requests, rps, r.Latency.P50, r.Latency.P99)
		cells[scenario] = r
	}
	for key, scenario := range want {
		if cells[scenario] == nil {
			t.Errorf("%s: no result of %s in results/%s/ (the stack's testid)", c.project, key, c.testid)
		}
	}
	return cells
}

// checkNothingLeft: after `compose down`, the project has no container, network or volume.
func checkNothingLeft(t *testing.T, e *engine, project string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	label := "label=com.docker.compose.project=" + project
	for _, kind := range [][]string{{"ps", "-a"}, {"network", "ls"}, {"volume", "ls"}} {
		out, err := e.run(ctx, "", nil, append(kind, "-q", "--filter", label)...)
		if err != nil {
			t.Errorf("%v\n%s", err, out)
		} else if strings.TrimSpace(out) != "" {
			t.Errorf("docker %s after compose down: %s left: %s", kind[0], project, out)
		}
	}
}
