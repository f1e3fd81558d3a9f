package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/k8s/cluster"
	"github.com/proxybench/proxybench/stack"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// The objects the operator makes, only the fields checked.
type (
	k8sContainer struct {
		Image   string   `json:"image"`
		Command []string `json:"command"`
		Env     []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"env"`
	}
	k8sPodSpec struct {
		Containers []k8sContainer `json:"containers"`
		Volumes    []struct {
			Name      string `json:"name"`
			ConfigMap *struct {
				Name string `json:"name"`
			} `json:"configMap"`
		} `json:"volumes"`
	}
	k8sJob struct {
		Metadata struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Template struct {
				Spec k8sPodSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	k8sPod struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Status struct {
			Phase      string `json:"phase"`
			Conditions []struct {
				Type, Status, Reason string
			} `json:"conditions"`
		} `json:"status"`
	}
	k8sService struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			ClusterIP string `json:"clusterIP"`
			Ports     []struct {
				Port int `json:"port"`
			} `json:"ports"`
		} `json:"spec"`
	}
)

// TestK8sTestRunOnTheOperator gives what `make k8s` writes to a real Kubernetes (k8s/cluster:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler on loopback) and the real
// k6-operator's controller, and reads back what the operator made of it:
//   - the API server accepts the ConfigMap and the TestRun, checked against the operator's own
//     CRD, and refuses the broken TestRuns our schema copy refuses;
//   - as written, the operator starts the initializer job: our image, `k6 archive` and
//     `k6 inspect` on the ConfigMap's archive;
//   - with the initializer disabled, it makes PARALLELISM runner jobs, each with its execution
//     segment, spec.arguments, the runners' env and the archive, and a Service each.
//
// There is no kubelet: every pod stays Pending (unschedulable: no node), so no test runs and
// the TestRun stays at the stage before its pods would run. `make test-k8s` runs it.
func TestK8sTestRunOnTheOperator(t *testing.T) {
	h := newHarness(t)
	cache, err := stack.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := cluster.Find(cache)
	if err != nil {
		t.Skipf("needs a cluster: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	t0 := time.Now()
	c, err := cluster.Up(ctx, bins, filepath.Join(t.TempDir(), "cluster"), nil, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Down(); err != nil {
			t.Errorf("cluster down: %v", err)
		}
	})
	t.Logf("cluster up in %.1f s at %s", time.Since(t0).Seconds(), c.Server)

	const image = "registry.example/proxybench-k6:test"
	write := func(t *testing.T, testid string, parallelism int) (dir, name string) {
		t.Helper()
		dir = t.TempDir()
		out, err := h.proxybench(t, "k8s", "-scenario", "reused-h1c", "-parallelism", fmt.Sprint(parallelism),
			"-image", image, "-target-url", "http://10.11.12.13:8081", "-testid", testid, "-out", dir)
		if err != nil {
			t.Fatalf("proxybench k8s: %v\n%s", err, out)
		}
		return dir, asTestRun(t, readManifest(t, filepath.Join(dir, "testrun.yaml"))).Metadata.Name
	}

	t.Run("server-side validation", func(t *testing.T) {
		dir, name := write(t, "k8s-dry", 2)
		out, err := c.Run(ctx, "apply", "--server-side", "--dry-run=server", "-f", dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range []string{"configmap/" + name, "testrun.k6.io/" + name} {
			if !strings.Contains(string(out), obj+" serverside-applied (server dry run)") {
				t.Errorf("the API server's dry run did not accept %s:\n%s", obj, out)
			}
		}
		checkBrokenTestRuns(ctx, t, h, c, filepath.Join(dir, "testrun.yaml"))
	})

	t.Run("initializer", func(t *testing.T) {
		dir, name := write(t, "k8s-init", 2)
		if _, err := c.Run(ctx, "apply", "--server-side", "-f", dir); err != nil {
			t.Fatal(err)
		}
		var job k8sJob
		waitFor(ctx, t, "the initializer job", func() error {
			return kubectlJSON(ctx, c, &job, "get", "job", name+"-initializer", "-o", "json")
		})
		spec := job.Spec.Template.Spec
		if len(spec.Containers) != 1 {
			t.Fatalf("the initializer has %d containers, want 1", len(spec.Containers))
		}
		ctr := spec.Containers[0]
		cmd := strings.Join(ctr.Command, " ")
		if ctr.Image != image {
			t.Errorf("initializer image %q, want the TestRun's %q", ctr.Image, image)
		}
		for _, want := range []string{"k6 archive", "/test/archive.tar", "k6 inspect --execution-requirements"} {
			if !strings.Contains(cmd, want) {
				t.Errorf("the initializer's command has no %q: %s", want, cmd)
			}
		}
		checkArchiveVolume(t, spec, name)
		checkPending(ctx, t, c, "k6_cr="+name, 1)
		got := stage(ctx, t, c, name)
		t.Logf("TestRun %s (initializer): stage %q", name, got)
		if got != "initialization" {
			t.Errorf("stage %q, want initialization (the initializer's pod cannot run)", got)
		}
	})

	t.Run("runners", func(t *testing.T) {
		const n = 3
		dir, name := write(t, "k8s-run", n)
		tr := readManifest(t, filepath.Join(dir, "testrun.yaml"))
		// the initializer's pod would never end here: the operator makes the runners at once
		tr["spec"].(map[string]any)["initializer"] = map[string]any{"disabled": true}
		writeYAML(t, filepath.Join(dir, "testrun.yaml"), tr)
		if _, err := c.Run(ctx, "apply", "--server-side", "-f", dir); err != nil {
			t.Fatal(err)
		}
		run := asTestRun(t, tr)
		var jobs struct{ Items []k8sJob }
		waitFor(ctx, t, fmt.Sprintf("%d runner jobs", n), func() error {
			if err := kubectlJSON(ctx, c, &jobs, "get", "jobs", "-l", "k6_cr="+name+",runner=true", "-o", "json"); err != nil {
				return err
			}
			if len(jobs.Items) < n {
				return fmt.Errorf("%d runner jobs", len(jobs.Items))
			}
			return nil
		})
		if len(jobs.Items) != n {
			t.Fatalf("%d runner jobs, want PARALLELISM=%d", len(jobs.Items), n)
		}
		seq := []string{"0"}
		for i := 1; i < n; i++ {
			seq = append(seq, fmt.Sprintf("%d/%d", i, n))
		}
		seq = append(seq, "1")
		for i := 1; i <= n; i++ {
			at := slices.IndexFunc(jobs.Items, func(j k8sJob) bool { return j.Metadata.Name == fmt.Sprintf("%s-%d", name, i) })
			if at < 0 {
				t.Errorf("no runner job %s-%d", name, i)
				continue
			}
			spec := jobs.Items[at].Spec.Template.Spec
			ctr := spec.Containers[0]
			cmd := " " + strings.Join(ctr.Command, " ") + " "
			for _, want := range []string{
				"--execution-segment=" + seq[i-1] + ":" + seq[i],
				"--execution-segment-sequence=" + strings.Join(seq, ","),
				" " + run.Spec.Arguments + " ", "/test/archive.tar", "--paused",
				"--tag instance_id=" + fmt.Sprint(i), "--tag testrun_name=" + name,
			} {
				if !strings.Contains(cmd, want) {
					t.Errorf("runner %d's command has no %q:%s", i, want, cmd)
				}
			}
			if ctr.Image != image {
				t.Errorf("runner %d's image %q, want %q", i, ctr.Image, image)
			}
			t.Logf("runner %d: %s", i, strings.TrimSpace(cmd))
			env := map[string]string{}
			for _, e := range ctr.Env {
				env[e.Name] = e.Value
			}
			for _, e := range run.Spec.Runner.Env {
				if v, ok := env[e.Name]; !ok || v != e.Value {
					t.Errorf("runner %d's env %s=%q, want the TestRun's %q", i, e.Name, v, e.Value)
				}
			}
			checkArchiveVolume(t, spec, name)
		}
		var svcs struct{ Items []k8sService }
		if err := kubectlJSON(ctx, c, &svcs, "get", "services", "-l", "k6_cr="+name, "-o", "json"); err != nil {
			t.Fatal(err)
		}
		if len(svcs.Items) != n {
			t.Errorf("%d services, want one per runner (%d)", len(svcs.Items), n)
		}
		for _, s := range svcs.Items {
			if s.Spec.ClusterIP == "" || len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 6565 {
				t.Errorf("service %s: cluster IP %q, ports %+v; want k6's REST API, 6565, on a cluster IP", s.Metadata.Name, s.Spec.ClusterIP, s.Spec.Ports)
			}
		}
		checkPending(ctx, t, c, "k6_cr="+name+",runner=true", n)
		// the runners' pods never become ready: no starter, the TestRun waits in created
		waitFor(ctx, t, "the TestRun in stage created", func() error {
			if got := stage(ctx, t, c, name); got != "created" {
				return fmt.Errorf("stage %q", got)
			}
			return nil
		})
		t.Logf("TestRun %s (%d runners, no initializer): stage %q", name, n, stage(ctx, t, c, name))
	})
}

// checkBrokenTestRuns: the operator's CRD, on the API server, refuses each broken TestRun our
// schema copy (k8s/testrun.schema.json) refuses, naming the field.
func checkBrokenTestRuns(ctx context.Context, t *testing.T, h *harness, c *cluster.Cluster, path string) {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join(h.root, "k8s", "testrun.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, field string
		breakIt     func(spec map[string]any)
	}{
		{"parallelism a string", "spec.parallelism", func(s map[string]any) { s["parallelism"] = "two" }},
		{"cleanup outside its enum", "spec.cleanup", func(s map[string]any) { s["cleanup"] = "always" }},
		{"a misspelt field", "spec.paralelism", func(s map[string]any) { s["paralelism"] = 2 }},
		{"no script", "spec.script", func(s map[string]any) { delete(s, "script") }},
		{"an env var without a name", "spec.runner.env[0].name", func(s map[string]any) {
			s["runner"].(map[string]any)["env"] = []any{map[string]any{"value": "x"}}
		}},
	}
	for _, tc := range tests {
		tr := readManifest(t, path)
		tc.breakIt(tr["spec"].(map[string]any))
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustJSON(t, tr)))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("%s: k8s/testrun.schema.json accepts it", tc.name)
		}
		broken := filepath.Join(t.TempDir(), "testrun.yaml")
		writeYAML(t, broken, tr)
		out, err := c.Run(ctx, "apply", "--server-side", "--dry-run=server", "-f", broken)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: the API server answered %v\n%s\nwant it refused, naming %s", tc.name, err, out, tc.field)
		}
	}
}

// checkArchiveVolume: the pod mounts the ConfigMap `make k8s` wrote, which holds the archive.
func checkArchiveVolume(t *testing.T, spec k8sPodSpec, configMap string) {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == configMap {
			return
		}
	}
	t.Errorf("no volume of ConfigMap %s in %+v", configMap, spec.Volumes)
}

// checkPending: the Job controller made n pods for the selector, and the scheduler found no
// node for any: there is no kubelet.
func checkPending(ctx context.Context, t *testing.T, c *cluster.Cluster, selector string, n int) {
	t.Helper()
	var pods struct{ Items []k8sPod }
	waitFor(ctx, t, fmt.Sprintf("%d pods (%s) marked unschedulable", n, selector), func() error {
		if err := kubectlJSON(ctx, c, &pods, "get", "pods", "-l", selector, "-o", "json"); err != nil {
			return err
		}
		unschedulable := 0
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == "PodScheduled" && cond.Status == "False" && cond.Reason == "Unschedulable" && p.Status.Phase == "Pending" {
					unschedulable++
				}
			}
		}
		if len(pods.Items) != n || unschedulable != n {
			return fmt.Errorf("%d pods, %d of them Pending and unschedulable", len(pods.Items), unschedulable)
		}
		return nil
	})
}

func stage(ctx context.Context, t *testing.T, c *cluster.Cluster, name string) string {
	t.Helper()
	out, err := c.Run(ctx, "get", "testrun", name, "-o", "jsonpath={.status.stage}")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func kubectlJSON(ctx context.Context, c *cluster.Cluster, v any, args ...string) error {
	out, err := c.Run(ctx, args...)
	if err != nil {
		return err
	}
	return json.Unmarshal(out, v)
}

// waitFor polls check for up to a minute: the operator and the controllers act on their own
// time.
func waitFor(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s: none after a minute: %v", what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testWriter writes each line to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
