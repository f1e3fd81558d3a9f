package main

// `make k8s-run`: a cell split over the k6-operator's runners on this machine's node (make
// k8s-up NODE=1), against the stack on the node's side of the host (STACK_LISTEN), merged into
// one result as `make k6 SEGMENTS=n` merges its instances.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/k8s"
	"github.com/proxybench/proxybench/k8s/cluster"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

func cmdK8sRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("k8s-run", flag.ContinueOnError)
	scenario, proto := cellFlags(fs)
	par := setting(fs, "parallelism", "PARALLELISM", "2")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return err
	}
	cells, err := k6Cells(*scenario, *proto)
	if err != nil {
		return err
	}
	// what reaches the runners is the TestRun's, which carries neither
	if len(f.extra) > 0 {
		return fmt.Errorf("extra k6 flags %q: k8s-run gives its runners none; run them here with make k6 SEGMENTS=n ARGS=…", f.extra)
	}
	if o := os.Getenv("K6_OUT"); o != "" {
		return fmt.Errorf("K6_OUT=%s: k8s-run's runners write only their histograms, for the merge; InfluxDB from the operator's runners is make k8s INFLUXDB_URL=…'s", o)
	}
	n, err := strconv.Atoi(strings.TrimSpace(*par))
	if err != nil || n < 1 || n > runner.MaxSegments {
		return fmt.Errorf("PARALLELISM=%q: want a whole number from 1 to %d, the runners the TestRun is split over", *par, runner.MaxSegments)
	}
	if err := runner.CheckSegments(strings.TrimSpace(*scenario), n); err != nil {
		return err
	}
	dir, err := clusterDir()
	if err != nil {
		return err
	}
	c, err := cluster.Load(dir)
	if err != nil {
		return err
	}
	if c == nil || !c.Alive() || c.Node == nil {
		return errors.New("no cluster with a node is up: start one with `make k8s-up NODE=1`, then the stack where its pods reach it: `make up STACK_LISTEN=" + cluster.HostIP + "`")
	}
	if err := stackOnTheNodesSide(); err != nil {
		return err
	}
	cache, err := stack.CacheDir()
	if err != nil {
		return err
	}
	imgs, err := nodeImages(cache)
	if err != nil {
		return err
	}
	// bin/k6 rebuilt since k8s-up is another image: imported now, or the pods wait for it
	if err := c.Import(ctx, imgs.k6.ref, imgs.k6.archive); err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	l := &operatorLauncher{
		cluster: c, image: imgs.k6.ref, profile: f.profile,
		// the image's k6 archives the scenario too
		k6: archiverK6(filepath.Join(root, "bin", "k6")),
	}
	return runOnStack(ctx, f, cells, func(r *runner.Runner) {
		r.Segments = n
		r.Launcher = l
		l.scenariosDir = r.ScenariosDir
	})
}

// stackOnTheNodesSide refuses a stack the pods cannot reach: one on loopback, or on another host.
func stackOnTheNodesSide() error {
	if os.Getenv("STACK") != "" {
		return errors.New("STACK=" + os.Getenv("STACK") + ": k8s-run runs against the stack on this machine, on the node's side: `make up STACK_LISTEN=" + cluster.HostIP + "`")
	}
	s, err := newStack()
	if err != nil {
		return err
	}
	st, err := s.LoadState()
	if err != nil {
		return err
	}
	if len(st.Targets) > 0 && st.Listen != cluster.HostIP {
		return fmt.Errorf("the stack listens on %s, which the node's pods do not reach: `make down`, then `make up STACK_LISTEN=%s`", st.Listen, cluster.HostIP)
	}
	return nil
}

// operatorLauncher runs a split run's instances as the runners of a TestRun.
type operatorLauncher struct {
	cluster      *cluster.Cluster
	image        string
	scenariosDir string
	profile      string
	k6           k8s.K6
}

// podEnv are the variables of a local instance's environment that go to the runners: those
// the scripts read and k6's own, not this machine's PATH, HOME or PWD. Paths among them (the
// CA, the targets) are mounted at the same place in the pods.
func podEnv(env []string) []k8s.EnvVar {
	var out []k8s.EnvVar
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		wanted := slices.Contains(runner.ScriptEnv, k) || strings.HasPrefix(k, "K6_") ||
			slices.Contains([]string{"SSL_CERT_FILE", "GODEBUG", "TARGETS_FILE", "SEGMENTS"}, k)
		// K6_OUT: the runners' own histograms file (Launch)
		if !wanted || k == "K6_OUT" || k == "PWD" {
			continue
		}
		out = slices.DeleteFunc(out, func(e k8s.EnvVar) bool { return e.Name == k }) // the last wins, as in a process
		out = append(out, k8s.EnvVar{Name: k, Value: v})
	}
	return out
}

func (o *operatorLauncher) Launch(ctx context.Context, l runner.Launch) ([]runner.Launched, error) {
	n := len(l.Summaries)
	segDir := filepath.Dir(l.Summaries[0])
	env := podEnv(l.Env)
	var mounts []k8s.Mount
	for _, e := range env {
		if (e.Name == "SSL_CERT_FILE" || e.Name == "TARGETS_FILE") && e.Value != "" {
			mounts = append(mounts, k8s.Mount{Path: e.Value})
		}
	}
	mounts = append(mounts, k8s.Mount{Path: segDir, Writable: true})
	// each runner names its files after its Job (<testrun>-<i>, 1-based): runnerFiles
	local := &k8s.Local{
		StarterImage: o.image, Mounts: mounts,
		Env: []k8s.EnvVar{
			{Name: "JOB_NAME", ValueFrom: labelRef("job-name")},
			{Name: "SUMMARY_JSON", Value: filepath.Join(segDir, "$(JOB_NAME).json")},
			{Name: "K6_OUT", Value: "proxybench-histograms=" + filepath.Join(segDir, "$(JOB_NAME).histograms.json")},
		},
	}
	// the manifests of each run, kept with its results
	mdir := filepath.Join(filepath.Dir(segDir), "k8s", l.Cell)
	w, err := k8s.Write(ctx, k8s.Job{
		Settings: k8s.Settings{
			Scenario: l.Job.Scenario, Proto: l.Job.Proto, Profile: o.profile, TestID: l.TestID,
			Parallelism: n, Image: o.image, Target: l.Job.Target, Local: local,
		},
		K6: o.k6, Script: l.Script, ScenariosDir: o.scenariosDir, Dir: mdir, Env: env,
	})
	if err != nil {
		return nil, err
	}
	name := w.Name
	for i := range n {
		for _, f := range runnerFiles(segDir, name, i) {
			_ = os.Remove(f) // an earlier run's under this testid is never taken for this one's
		}
	}
	defer o.remove(name, mdir)
	if _, err := o.cluster.Run(ctx, "apply", "--server-side", "-f", mdir); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "k8s-run: TestRun %s applied: %d runners on %s (manifests in %s)\n", name, n, o.image, mdir)
	if err := o.waitStage(ctx, name); err != nil {
		return nil, err
	}
	o.printLogs(ctx, name, n)
	exits, err := o.runnerExits(ctx, name, n)
	if err != nil {
		return nil, err
	}
	resumed, err := o.resumeTimes(ctx, name, n)
	if err != nil {
		return nil, fmt.Errorf("%w (runners' exit codes %v)", err, exits)
	}
	got := make([]runner.Launched, n)
	for i := range n {
		files := runnerFiles(segDir, name, i)
		for k, to := range []string{l.Summaries[i], l.Histograms[i]} {
			// a file a runner did not write is said by the merge, naming the runner
			if err := os.Rename(files[k], to); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		got[i] = runner.Launched{Exit: exits[i], Resumed: resumed[i]}
	}
	return got, nil
}

// runnerFiles are the result and histograms files runner i (0-based) of TestRun name writes.
func runnerFiles(segDir, name string, i int) [2]string {
	job := fmt.Sprintf("%s-%d", name, i+1)
	return [2]string{filepath.Join(segDir, job+".json"), filepath.Join(segDir, job+".histograms.json")}
}

// remove deletes the TestRun and its ConfigMap, and waits until its pods are gone: a runner
// still sending (an interrupt, a timeout) must not load the next cell's target.
func (o *operatorLauncher) remove(name, mdir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := o.cluster.Run(ctx, "delete", "--ignore-not-found", "--cascade=foreground", "--wait", "-f", mdir); err != nil {
		fmt.Fprintf(os.Stderr, "warning: k8s-run: %v\n", err)
	}
	if _, err := o.cluster.Run(ctx, "wait", "--for=delete", "pods", "-l", "k6_cr="+name, "--timeout=120s"); err != nil && !strings.Contains(err.Error(), "no matching resources") {
		fmt.Fprintf(os.Stderr, "warning: k8s-run: the pods of TestRun %s: %v\n", name, err)
	}
}

func labelRef(label string) *k8s.EnvSource {
	s := &k8s.EnvSource{}
	s.FieldRef.FieldPath = "metadata.labels['" + label + "']"
	return s
}

// waitStage waits for the TestRun's stage to be finished, as long as ctx lets it (the run's
// RUN_TIMEOUT: pods starting and the operator's polling come within its 5 minutes); the stage
// error is an error that says the pods' states.
func (o *operatorLauncher) waitStage(ctx context.Context, name string) error {
	last := ""
	for {
		out, err := o.cluster.Run(ctx, "get", "testrun", name, "-o", "jsonpath={.status.stage}")
		stage := strings.TrimSpace(string(out))
		if err == nil && stage != last {
			fmt.Fprintf(os.Stderr, "k8s-run: TestRun %s: %s\n", name, stage)
			last = stage
		}
		switch stage {
		case "finished":
			return nil
		case "error":
			return fmt.Errorf("TestRun %s: stage error; pods: %s", name, o.podStates(name))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("TestRun %s: stage %q, not finished; pods: %s", name, last, o.podStates(name))
		case <-time.After(time.Second):
		}
	}
}

func (o *operatorLauncher) podStates(name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := o.cluster.Run(ctx, "get", "pods", "-l", "k6_cr="+name, "-o",
		`jsonpath={range .items[*]}{.metadata.name}={.status.phase}{range .status.containerStatuses[*]} {.state.waiting.reason}{.state.terminated.reason}{end}; {end}`)
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(out))
}

// printLogs prints each runner's output, as a local split run prints its instances'.
func (o *operatorLauncher) printLogs(ctx context.Context, name string, n int) {
	for i := range n {
		out, err := o.cluster.Run(ctx, "logs", "job/"+fmt.Sprintf("%s-%d", name, i+1))
		if err != nil {
			fmt.Fprintf(os.Stderr, "[%d/%d] %v\n", i+1, n, err)
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			fmt.Printf("[%d/%d] %s\n", i+1, n, sc.Text())
		}
	}
}

// runnerExits are the exit codes of the runners' k6, read from their pods.
func (o *operatorLauncher) runnerExits(ctx context.Context, name string, n int) ([]int, error) {
	out, err := o.cluster.Run(ctx, "get", "pods", "-l", "k6_cr="+name+",runner=true", "-o", "json")
	if err != nil {
		return nil, err
	}
	var pods struct {
		Items []struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Status struct {
				ContainerStatuses []struct {
					State struct {
						Terminated *struct {
							ExitCode int `json:"exitCode"`
						} `json:"terminated"`
					} `json:"state"`
				} `json:"containerStatuses"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &pods); err != nil {
		return nil, fmt.Errorf("the runners' pods: %w", err)
	}
	exits := make([]int, n)
	seen := make([]bool, n)
	for _, p := range pods.Items {
		i, err := strconv.Atoi(strings.TrimPrefix(p.Metadata.Labels["job-name"], name+"-"))
		if err != nil || i < 1 || i > n {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Terminated != nil {
				exits[i-1], seen[i-1] = cs.State.Terminated.ExitCode, true
			}
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("runner %d/%d of TestRun %s: no pod that ended", i+1, n, name)
		}
	}
	return exits, nil
}

// resumeTimes are when the starter resumed each runner, from its log: podcurl (the image's
// curl) says the time of each answer, and the Service it called names the runner.
func (o *operatorLauncher) resumeTimes(ctx context.Context, name string, n int) ([]time.Time, error) {
	out, err := o.cluster.Run(ctx, "get", "services", "-l", "k6_cr="+name, "-o", `jsonpath={range .items[*]}{.metadata.name} {.spec.clusterIP}{"\n"}{end}`)
	if err != nil {
		return nil, err
	}
	byIP := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		svc, ip, _ := strings.Cut(line, " ")
		if i, err := strconv.Atoi(svc[strings.LastIndexByte(svc, '-')+1:]); err == nil {
			byIP[ip] = i
		}
	}
	logs, err := o.cluster.Run(ctx, "logs", "job/"+name+"-starter")
	if err != nil {
		return nil, err
	}
	times := make([]time.Time, n)
	sc := bufio.NewScanner(bytes.NewReader(logs))
	for sc.Scan() {
		var line struct {
			Call   string `json:"podcurl"`
			Status int    `json:"status"`
			UnixNs int64  `json:"unix_ns"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Call == "" {
			continue
		}
		_, u, _ := strings.Cut(line.Call, " ")
		host := strings.TrimPrefix(u, "http://")
		host, _, _ = strings.Cut(host, ":")
		if i, ok := byIP[host]; ok && i >= 1 && i <= n && line.Status == 200 {
			times[i-1] = time.Unix(0, line.UnixNs)
		}
	}
	for i, t := range times {
		if t.IsZero() {
			return nil, fmt.Errorf("runner %d/%d of TestRun %s: the starter's log says no resume of it:\n%s", i+1, n, name, logs)
		}
	}
	return times, nil
}
