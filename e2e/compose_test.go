package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/stack"
)

// There is no Docker engine here. compose.yaml is loaded by compose-go, the loader docker
// compose itself uses (schema validation, interpolation, anchors and merges), and what it
// describes is checked against targets.json and the native stack; then TestComposeStackServes
// stands in for the engine: with host networking a container's process is a process on the
// host, so it runs each service's command as one, with the image's environment and the
// certificates' bind mount, and the native tools must adopt, verify and measure that stack.

// imageRun is PROXYBENCH_RUN in the image (Dockerfile), where the certs volume is mounted.
const imageRun = "/proxybench/run"

func loadCompose(t *testing.T, root string, env ...string) *types.Project {
	t.Helper()
	return loadComposeFiles(t, root, []string{"compose.yaml"}, env...)
}

// bridgeFiles are the bridge variant's (compose.bridge.yaml over compose.yaml), in their order.
var bridgeFiles = []string{"compose.yaml", "compose.bridge.yaml"}

// loadComposeFiles loads files (relative to root) as `docker compose -f … -f …` would: each
// later one overrides the earlier ones.
func loadComposeFiles(t *testing.T, root string, files []string, env ...string) *types.Project {
	t.Helper()
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(root, f))
	}
	opts, err := cli.NewProjectOptions(paths,
		cli.WithWorkingDirectory(root), cli.WithEnv(env), cli.WithProfiles([]string{"*"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("%s does not load as docker compose would load it: %v", strings.Join(files, " + "), err)
	}
	return p
}

// execCommand is the target a service runs through `proxybench exec`, or "".
func execCommand(cmd []string) string {
	if len(cmd) == 3 && cmd[0] == "bin/proxybench" && cmd[1] == "exec" {
		return cmd[2]
	}
	if m := regexp.MustCompile(`exec bin/proxybench exec (\S+)$`).FindStringSubmatch(strings.Join(cmd, " ")); m != nil {
		return m[1]
	}
	return ""
}

// TestComposeMatchesTargets: one service per target of targets.json, each the native stack's
// command for it (proxybench exec, so the same template and the same targets.json make its
// config) on the host's network (so the same ports), after the shared certificates; InfluxDB
// and Grafana as the native observe stack and the provisioning expect them.
func TestComposeMatchesTargets(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	p := loadCompose(t, root)
	cfg, err := stack.LoadConfig(filepath.Join(root, "targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dockerfile), "PROXYBENCH_RUN="+imageRun) || !strings.Contains(string(dockerfile), "make build") {
		t.Errorf("Dockerfile: the image must build with `make build` and keep its run directory in %s", imageRun)
	}
	checkDockerfileStages(t, string(dockerfile))
	checkDockerfileInstalls(t, root, string(dockerfile))

	want := append(cfg.Names(), "certs", "k6", "influxdb", "grafana")
	if got := p.ServiceNames(); !sameSet(got, want) {
		t.Errorf("compose services %v, want %v (every target of targets.json, certs, k6, influxdb, grafana)", got, want)
	}
	checkHealthchecks(t, p, cfg.Names())
	checkK6Service(t, p, root)
	checkComposeListen(t, root, cfg)
	certsMount := func(s types.ServiceConfig) bool {
		return slices.ContainsFunc(s.Volumes, func(v types.ServiceVolumeConfig) bool {
			return v.Source == filepath.Join(root, "run", "certs") && v.Target == imageRun+"/certs"
		})
	}
	if s, err := p.GetService("certs"); err != nil || !slices.Equal(s.Command, types.ShellCommand{"bin/proxybench", "certs"}) || !certsMount(s) {
		t.Errorf("service certs: want `bin/proxybench certs` with run/certs mounted at %s: %+v %v", imageRun+"/certs", s.Command, err)
	}
	for _, n := range cfg.Names() {
		s, err := p.GetService(n)
		if err != nil {
			continue // said above
		}
		if got := execCommand(s.Command); got != n {
			t.Errorf("service %s runs %q, want `bin/proxybench exec %s`", n, s.Command, n)
		}
		if s.NetworkMode != "host" {
			t.Errorf("service %s: network_mode %q, want host (the same ports on 127.0.0.1 as natively)", n, s.NetworkMode)
		}
		if !certsMount(s) {
			t.Errorf("service %s: run/certs is not mounted at %s/certs", n, imageRun)
		}
		if d, ok := s.DependsOn["certs"]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
			t.Errorf("service %s: must start after certs completed successfully, depends_on %+v", n, s.DependsOn)
		}
		def, err := stack.LoadDefinition(filepath.Join(root, "proxies"), n)
		optional := err == nil && def.Optional
		if optional != (len(s.Profiles) > 0) {
			t.Errorf("service %s: profiles %v; an optional target (no registry serves it) has one, every other none", n, s.Profiles)
		}
	}

	influx, err := p.GetService("influxdb")
	if err == nil {
		if influx.Image != "influxdb:"+observe.Version {
			t.Errorf("influxdb image %s, want influxdb:%s (the native build)", influx.Image, observe.Version)
		}
		for k, v := range map[string]string{"INFLUXDB_HTTP_BIND_ADDRESS": observe.DefaultAddr, "INFLUXDB_DB": observe.DefaultBucket} {
			if got := influx.Environment[k]; got == nil || *got != v {
				t.Errorf("influxdb %s = %v, want %s", k, got, v)
			}
		}
	}
	graf, err := p.GetService("grafana")
	if err == nil {
		env := func(k string) string {
			if v := graf.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		if env("INFLUXDB_URL") != "http://"+observe.DefaultAddr {
			t.Errorf("grafana INFLUXDB_URL %q, want http://%s", env("INFLUXDB_URL"), observe.DefaultAddr)
		}
		mounts := map[string]string{}
		for _, v := range graf.Volumes {
			mounts[v.Target] = v.Source
		}
		for target, source := range map[string]string{
			"/etc/grafana/provisioning": filepath.Join(root, "dashboards", "provisioning"),
			env("DASHBOARDS_DIR"):       filepath.Join(root, "dashboards", "definitions"),
		} {
			if mounts[target] != source {
				t.Errorf("grafana: %s mounted at %q, want %s", mounts[target], target, source)
			}
		}
		// the provisioning files read exactly these variables
		for file, v := range map[string]string{"datasources/influxdb.yaml": "${INFLUXDB_URL}", "dashboards/proxybench.yaml": "${DASHBOARDS_DIR}"} {
			data, err := os.ReadFile(filepath.Join(root, "dashboards", "provisioning", file))
			if err != nil || !bytes.Contains(data, []byte(v)) {
				t.Errorf("dashboards/provisioning/%s does not read %s (%v)", file, v, err)
			}
		}
	}
	for _, n := range []string{"influxdb", "grafana"} {
		if s, err := p.GetService(n); err == nil && (!slices.Equal(s.Profiles, []string{"observe"}) || s.NetworkMode != "host") {
			t.Errorf("service %s: profiles %v, network_mode %q; want [observe], host", n, s.Profiles, s.NetworkMode)
		}
	}
}

// TestComposeBridgeMatchesTargets: compose.bridge.yaml over compose.yaml takes every service off
// the host's network, publishes each target's ports of targets.json on 127.0.0.1 (TLS over TCP
// and UDP, cleartext, GoDoxy's control port), has every target listen on its container's
// interfaces and every proxy find the upstream as the direct service, and the k6 service,
// InfluxDB and Grafana find each other by name; what it leaves alone stays compose.yaml's.
func TestComposeBridgeMatchesTargets(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	host := loadCompose(t, root)
	p := loadComposeFiles(t, root, bridgeFiles)
	cfg, err := stack.LoadConfig(filepath.Join(root, "targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.ServiceNames(), host.ServiceNames(); !sameSet(got, want) {
		t.Errorf("bridge services %v, want compose.yaml's %v", got, want)
	}
	checkHealthchecks(t, p, cfg.Names())
	env := func(s types.ServiceConfig, k string) string {
		if v := s.Environment[k]; v != nil {
			return *v
		}
		return ""
	}
	published := func(s types.ServiceConfig) []string {
		var out []string
		for _, port := range s.Ports {
			out = append(out, fmt.Sprintf("%s:%s:%d/%s", port.HostIP, port.Published, port.Target, port.Protocol))
		}
		return out
	}
	for _, s := range p.Services {
		if s.NetworkMode != "" {
			t.Errorf("service %s: network_mode %q under compose.bridge.yaml, want the project's network", s.Name, s.NetworkMode)
		}
		h, _ := host.GetService(s.Name)
		if !slices.Equal(s.Command, h.Command) || s.HealthCheck != nil && h.HealthCheck != nil && !slices.Equal(s.HealthCheck.Test, h.HealthCheck.Test) {
			t.Errorf("service %s: compose.bridge.yaml changes its command or healthcheck: only the network is its to change", s.Name)
		}
	}
	for _, n := range cfg.Names() {
		s, err := p.GetService(n)
		if err != nil {
			continue // said above
		}
		ports := cfg.Targets[n]
		want := []string{
			fmt.Sprintf("127.0.0.1:%d:%d/tcp", ports.TLS, ports.TLS),
			fmt.Sprintf("127.0.0.1:%d:%d/udp", ports.TLS, ports.TLS), // h3
			fmt.Sprintf("127.0.0.1:%d:%d/tcp", ports.H1C, ports.H1C),
		}
		if ports.Admin != 0 {
			want = append(want, fmt.Sprintf("127.0.0.1:%d:%d/tcp", ports.Admin, ports.Admin))
		}
		if got := published(s); !sameSet(got, want) {
			t.Errorf("service %s publishes %v, want %v (targets.json's ports, on 127.0.0.1 only)", n, got, want)
		}
		if got := env(s, stack.ListenEnv); got != "0.0.0.0" {
			t.Errorf("service %s: %s=%q, want 0.0.0.0 (reached from other containers and the published ports)", n, stack.ListenEnv, got)
		}
		wantUp := stack.Direct
		if n == stack.Direct {
			wantUp = "" // the upstream itself
		}
		if got := env(s, stack.UpstreamEnv); got != wantUp {
			t.Errorf("service %s: %s=%q, want %q (the upstream's service name)", n, stack.UpstreamEnv, got, wantUp)
		}
	}
	k6, err := p.GetService("k6")
	if err == nil && (env(k6, "PROXYBENCH_TARGET_BY_NAME") != "1" || env(k6, "INFLUXDB_ADDR") != "influxdb:8086") {
		t.Errorf("service k6: PROXYBENCH_TARGET_BY_NAME=%q INFLUXDB_ADDR=%q, want 1 and the influxdb service", env(k6, "PROXYBENCH_TARGET_BY_NAME"), env(k6, "INFLUXDB_ADDR"))
	}
	if err == nil {
		checkK6Service(t, withHostNetwork(k6, p), root)
	}
	for n, want := range map[string]string{"influxdb": "127.0.0.1:8086:8086/tcp", "grafana": "127.0.0.1:3000:3000/tcp"} {
		if s, err := p.GetService(n); err == nil && !slices.Equal(published(s), []string{want}) {
			t.Errorf("service %s publishes %v, want [%s] (as natively)", n, published(s), want)
		}
	}
	if g, err := p.GetService("grafana"); err == nil && env(g, "INFLUXDB_URL") != "http://influxdb:8086" {
		t.Errorf("grafana INFLUXDB_URL %q under bridge networking, want http://influxdb:8086", env(g, "INFLUXDB_URL"))
	}
}

// withHostNetwork is p with s (its network_mode set back to host) in it, for the checks that
// are compose.yaml's and do not depend on the network.
func withHostNetwork(s types.ServiceConfig, p *types.Project) *types.Project {
	s.NetworkMode = "host"
	q := *p
	q.Services = maps.Clone(p.Services)
	q.Services[s.Name] = s
	return &q
}

// checkDockerfileStages: the base images are build arguments (so that a machine without a
// registry builds the same file on images it made), and the final stage is not the build one.
func checkDockerfileStages(t *testing.T, dockerfile string) {
	t.Helper()
	var froms []string
	for _, line := range strings.Split(dockerfile, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "FROM" {
			froms = append(froms, f[1])
		}
	}
	for _, arg := range []string{"GOLANG_IMAGE", "RUST_IMAGE", "DEBIAN_IMAGE"} {
		if !slices.Contains(froms, "${"+arg+"}") || !strings.Contains(dockerfile, "\nARG "+arg+"=") {
			t.Errorf("Dockerfile: no stage FROM ${%s} with a default (stages: %v)", arg, froms)
		}
	}
	if len(froms) < 2 || froms[len(froms)-1] != "${DEBIAN_IMAGE}" {
		t.Errorf("Dockerfile: the final stage must be FROM ${DEBIAN_IMAGE} without the build tools (stages: %v)", froms)
	}
}

// checkDockerfileInstalls: the image installs every target that is not optional with its own
// install script, as `make setup` does, each keyed by its own files: the script runs after a
// COPY of that proxy's folder or script alone, and the whole of proxies/ (every template) is
// copied only after the last install, so that a change to one proxy rebuilds that proxy alone.
func checkDockerfileInstalls(t *testing.T, root, dockerfile string) {
	t.Helper()
	lines := strings.Split(dockerfile, "\n")
	lastInstall, wholeCopy := -1, -1
	for i, line := range lines {
		if strings.Contains(line, "/install.sh") {
			lastInstall = i
		}
		if strings.TrimSpace(line) == "COPY proxies/ proxies/" && wholeCopy < 0 {
			wholeCopy = i
		}
	}
	if wholeCopy >= 0 && wholeCopy < lastInstall {
		t.Errorf("Dockerfile line %d: COPY proxies/ before an install (line %d): every proxy's build would be keyed by every proxy's files", wholeCopy+1, lastInstall+1)
	}
	defs, err := filepath.Glob(filepath.Join(root, "proxies", "*", "target.json"))
	if err != nil || len(defs) == 0 {
		t.Fatalf("no proxies/*/target.json: %v", err)
	}
	for _, def := range defs {
		name := filepath.Base(filepath.Dir(def))
		d, err := stack.LoadDefinition(filepath.Join(root, "proxies"), name)
		if err != nil {
			t.Fatal(err)
		}
		script := "proxies/" + name + "/install.sh"
		run := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "bash "+script) })
		switch {
		case d.Optional:
			if run >= 0 {
				t.Errorf("Dockerfile: %s is optional (no registry serves it), yet the image installs it", name)
			}
		case run < 0:
			t.Errorf("Dockerfile: no `bash %s`: the image must install %s as `make setup` does", script, name)
		case !slices.ContainsFunc(lines[:run], func(l string) bool {
			f := strings.Fields(l)
			return len(f) == 3 && f[0] == "COPY" && (f[1] == "proxies/"+name+"/" || f[1] == script)
		}):
			t.Errorf("Dockerfile: %s is installed (line %d) without a COPY of its own folder or script before it", name, run+1)
		}
	}
}

// checkComposeListen: STACK_LISTEN (the stack host's address, `make compose-up
// STACK_LISTEN=<ip>`) reaches every service that listens, forwards or names an address in its
// certificate, and without it each listens where targets.json says.
func checkComposeListen(t *testing.T, root string, cfg *stack.Config) {
	t.Helper()
	const ip = "192.0.2.7"
	for _, listen := range []string{"", ip} {
		p := loadCompose(t, root, "STACK_LISTEN="+listen)
		for _, n := range append(cfg.Names(), "certs") {
			s, err := p.GetService(n)
			if err != nil {
				continue // TestComposeMatchesTargets says so
			}
			want := map[string]string{stack.ListenEnv: listen, stack.UpstreamEnv: listen}
			switch n {
			case "certs", stack.Direct: // a certificate, the upstream itself: no upstream
				want[stack.UpstreamEnv] = ""
			}
			for k, v := range want {
				got := ""
				if e := s.Environment[k]; e != nil {
					got = *e
				}
				if got != v {
					t.Errorf("STACK_LISTEN=%q: service %s has %s=%q, want %q", listen, n, k, got, v)
				}
			}
		}
	}
}

// checkHealthchecks: every long-running service says when it answers, so that `docker compose
// up --wait` returns only then: a target by `proxybench health` of itself, after direct (the
// upstream every proxy forwards to) is healthy; InfluxDB by /ping, Grafana by /api/health.
func checkHealthchecks(t *testing.T, p *types.Project, targets []string) {
	t.Helper()
	for _, s := range p.Services {
		if s.Name == "certs" || s.Name == "k6" {
			continue // one-shot
		}
		hc := s.HealthCheck
		if hc == nil || len(hc.Test) < 2 || hc.Test[0] != "CMD" || hc.Interval == nil || hc.Retries == nil {
			t.Errorf("service %s: no healthcheck (CMD, interval, retries): %+v", s.Name, hc)
			continue
		}
		test := strings.Join(hc.Test[1:], " ")
		switch {
		case slices.Contains(targets, s.Name):
			if test != "bin/proxybench health "+s.Name {
				t.Errorf("service %s: healthcheck %q, want `bin/proxybench health %s`", s.Name, test, s.Name)
			}
			if s.Name == stack.Direct {
				continue
			}
			if d, ok := s.DependsOn[stack.Direct]; !ok || d.Condition != types.ServiceConditionHealthy {
				t.Errorf("service %s: must start after direct is healthy, depends_on %+v", s.Name, s.DependsOn)
			}
		case s.Name == "influxdb":
			if !strings.HasSuffix(test, "http://"+observe.DefaultAddr+"/ping") {
				t.Errorf("influxdb healthcheck %q: want InfluxDB's /ping on %s", test, observe.DefaultAddr)
			}
		case s.Name == "grafana":
			if !strings.HasSuffix(test, "/api/health") {
				t.Errorf("grafana healthcheck %q: want Grafana's /api/health", test)
			}
			if d, ok := s.DependsOn["influxdb"]; !ok || d.Condition != types.ServiceConditionHealthy {
				t.Errorf("grafana must start after influxdb is healthy, depends_on %+v", s.DependsOn)
			}
		}
	}
}

// checkK6Service: `docker compose run --rm k6 run scenarios/X.js` is our bin/k6 on the mounted
// scenarios, trusting the stack's CA, started only when run (a profile of its own).
func checkK6Service(t *testing.T, p *types.Project, root string) {
	t.Helper()
	s, err := p.GetService("k6")
	if err != nil {
		return // said by the services check
	}
	if !slices.Equal(s.Entrypoint, types.ShellCommand{"docker/k6-entrypoint.sh"}) || s.NetworkMode != "host" || !slices.Equal(s.Profiles, []string{"k6"}) {
		t.Errorf("service k6: entrypoint %v, network_mode %q, profiles %v; want docker/k6-entrypoint.sh, host, [k6]", s.Entrypoint, s.NetworkMode, s.Profiles)
	}
	mounts := map[string]string{}
	for _, v := range s.Volumes {
		mounts[v.Target] = v.Source
	}
	for target, source := range map[string]string{
		"/proxybench/scenarios": filepath.Join(root, "scenarios"),
		imageRun + "/certs":     filepath.Join(root, "run", "certs"),
		"/proxybench/results":   filepath.Join(root, "results"),
	} {
		if mounts[target] != source {
			t.Errorf("service k6: %s mounted at %q, want %s", mounts[target], target, source)
		}
	}
	if v := s.Environment["SSL_CERT_FILE"]; v == nil || *v != imageRun+"/certs/ca.pem" {
		t.Errorf("service k6: SSL_CERT_FILE %v, want %s/certs/ca.pem (the stack's CA: certificates verified)", v, imageRun)
	}
	// one testid per stack: direct writes it where the k6 service reads it, TESTID (.env,
	// the environment) wins
	composeDir := filepath.Join(root, "run", "compose")
	if mounts[imageRun+"/compose"] != composeDir {
		t.Errorf("service k6: %s mounted at %s/compose, want %s (the stack's testid)", mounts[imageRun+"/compose"], imageRun, composeDir)
	}
	if d, err := p.GetService(stack.Direct); err == nil && !slices.ContainsFunc(d.Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Source == composeDir && v.Target == imageRun+"/compose" && !v.ReadOnly
	}) {
		t.Errorf("service direct: %s is not mounted writable at %s/compose: it writes the stack's testid there", composeDir, imageRun)
	}
	if v := s.Environment["TESTID"]; v == nil || *v != "" {
		t.Errorf("service k6: TESTID %v, want ${TESTID:-} (empty unless .env or the environment sets it)", v)
	}
	if _, err := os.Stat(filepath.Join(root, "docker", "k6-entrypoint.sh")); err != nil {
		t.Errorf("service k6: %v", err)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// container is one service run as the engine would run it with host networking.
type container struct {
	name string
	cmd  *exec.Cmd
	log  bytes.Buffer
	done chan error
}

// TestComposeStackServes runs compose.yaml's default services the way the engine would, on the
// test's own ports, then adopts them with `proxybench attach` (as `make compose-up` does) and
// checks that every target is the process compose started, serving each of its protocols, that
// a k6 run against all of them is valid, and that the native controls leave compose's processes
// alone.
func TestComposeStackServes(t *testing.T) {
	h := newHarness(t)
	p := loadCompose(t, h.root)
	host := filepath.Join(t.TempDir(), "host")
	certs := filepath.Join(host, "certs") // ./run/certs, mounted into every container
	if err := os.MkdirAll(certs, 0o755); err != nil {
		t.Fatal(err)
	}
	// The image's environment: its run directory, a clone of the repository as the working
	// directory (here the repository itself, whose bin/ `make test` built as `make setup` does
	// in the image), and, for the test, targets.json on the test's ports.
	start := func(s types.ServiceConfig) *container {
		run := filepath.Join(t.TempDir(), s.Name)
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(certs, filepath.Join(run, "certs")); err != nil {
			t.Fatal(err)
		}
		c := &container{name: s.Name, done: make(chan error, 1)}
		c.cmd = exec.Command(s.Command[0], s.Command[1:]...)
		c.cmd.Dir = h.root
		c.cmd.Env = append(os.Environ(), "PROXYBENCH_RUN="+run, "TARGETS_FILE="+h.targets)
		for k, v := range s.Environment {
			if v != nil {
				c.cmd.Env = append(c.cmd.Env, k+"="+*v)
			}
		}
		c.cmd.Stdout, c.cmd.Stderr = &c.log, &c.log
		c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.cmd.Start(); err != nil {
			t.Fatalf("service %s: %v", s.Name, err)
		}
		go func() { c.done <- c.cmd.Wait() }()
		return c
	}
	var running []*container
	t.Cleanup(func() {
		// docker compose down: SIGTERM, then SIGKILL after the grace period
		for _, c := range running {
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
		}
		for _, c := range running {
			select {
			case <-c.done: //nolint:errcheck // told to stop: its exit status says nothing
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
				<-c.done //nolint:errcheck // killed: its exit status says nothing
			}
		}
	})

	enabled, err := p.WithProfiles(nil) // `docker compose up` with no profile
	if err != nil {
		t.Fatal(err)
	}
	order := enabled.ServiceNames()
	slices.SortFunc(order, func(a, b string) int { // certs first: every other depends on it
		return boolInt(b == "certs") - boolInt(a == "certs")
	})
	for _, n := range order {
		s, _ := enabled.GetService(n)
		if n != "certs" && !slices.Contains(h.cfg.Names(), n) {
			continue // E2E_TARGETS left it out
		}
		c := start(s)
		if n == "certs" {
			if err := <-c.done; err != nil {
				t.Fatalf("service certs: %v\n%s", err, c.log.String())
			}
			continue
		}
		running = append(running, c)
	}

	attach := exec.Command(filepath.Join(h.root, "bin", "proxybench"), "attach")
	attach.Dir = h.root
	attach.Env = append(h.env(), "PROXYBENCH_RUN="+host)
	out, err := attach.CombinedOutput()
	if err != nil {
		for _, c := range running {
			t.Logf("service %s:\n%s", c.name, c.log.String())
		}
		t.Fatalf("proxybench attach: %v\n%s", err, out)
	}
	t.Log(string(out))
	st := readState(t, host)
	if st.Engine != stack.EngineCompose {
		t.Errorf("state engine %q, want %q", st.Engine, stack.EngineCompose)
	}
	for _, c := range running {
		r, ok := st.Targets[c.name]
		if !ok {
			t.Errorf("target %s: not adopted", c.name)
			continue
		}
		// the container's process is the target itself (exec), and attach found that one
		if r.PID != c.cmd.Process.Pid {
			t.Errorf("target %s: attached pid %d, the service's process is %d", c.name, r.PID, c.cmd.Process.Pid)
		}
	}
	// each service's healthcheck, run in its container's environment, passes; a target that is
	// not up (godoxy: compose did not start its profile) and an unknown one fail it
	health := func(env []string, args ...string) error {
		cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), append([]string{"health"}, args...)...)
		cmd.Dir, cmd.Env = h.root, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	for _, c := range running {
		s, _ := enabled.GetService(c.name)
		if s.HealthCheck == nil || len(s.HealthCheck.Test) != 4 {
			t.Errorf("service %s: healthcheck %+v, want [CMD bin/proxybench health %s]", c.name, s.HealthCheck, c.name)
			continue
		}
		if err := health(c.cmd.Env, s.HealthCheck.Test[3]); err != nil {
			t.Errorf("service %s: its healthcheck fails while it serves: %v", c.name, err)
		}
	}
	if slices.Contains(h.cfg.Names(), "godoxy") && len(running) > 0 {
		if err := health(running[0].cmd.Env, "-timeout", "500ms", "godoxy"); err == nil {
			t.Errorf("the healthcheck of godoxy, which compose did not start, passes")
		}
	}
	if err := health(h.env(), "nosuch"); err == nil || !strings.Contains(err.Error(), `unknown target "nosuch"`) {
		t.Errorf("health nosuch: want an error naming the unknown target, got %v", err)
	}
	if godoxy, ok := st.Missing["godoxy"]; !ok && slices.Contains(h.cfg.Names(), "godoxy") {
		t.Errorf("godoxy (a profile compose did not start) is not recorded as missing: %v", st.Missing)
	} else if ok && !strings.Contains(godoxy, "docker compose") {
		t.Errorf("godoxy missing %q: should say compose did not start it", godoxy)
	}

	// the native controls: status and k6 use it; up and down leave it to compose
	hostEnv := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), args...)
		cmd.Dir = h.root
		cmd.Env = append(h.env(), "PROXYBENCH_RUN="+host)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	out2, err := hostEnv("status")
	if err != nil || strings.Contains(out2, "FAIL") {
		t.Errorf("status: %v\n%s", err, out2)
	}
	testid := "e2e-compose"
	out2, err = hostEnv("k6", "-scenario", "reused-h1c", "-targets", "all", "-testid", testid)
	if err != nil {
		t.Errorf("k6 reused-h1c against the compose stack: %v\n%s", err, out2)
	}
	valid := 0
	for _, r := range loadResults(t, filepath.Join(h.results, testid)) {
		if r.Skipped == "" {
			checkResult(t, "reused-h1c", r)
			valid++
		}
	}
	if valid != len(running) {
		t.Errorf("%d measured cells, want one per compose service (%d)", valid, len(running))
	}
	if out2, err = hostEnv("up"); err == nil || !strings.Contains(out2, "compose-down") {
		t.Errorf("up over a compose stack: want a refusal naming `make compose-down`, got %v\n%s", err, out2)
	}
	if out2, err = hostEnv("down"); err == nil || !strings.Contains(out2, "compose-down") {
		t.Errorf("down of a compose stack: want a refusal naming `make compose-down`, got %v\n%s", err, out2)
	}
	for _, c := range running {
		select {
		case err := <-c.done:
			t.Errorf("service %s ended while the test ran (%v): the native controls must leave it alone\n%s", c.name, err, c.log.String())
		default:
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
