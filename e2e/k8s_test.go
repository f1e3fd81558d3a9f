package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// configMapLimit is Kubernetes' limit on a ConfigMap, which the k6-operator's docs repeat.
const configMapLimit = 1 << 20

// k8sCase is one `make k8s`: a scenario, the client that drives it (CLIENT: the native loop
// replaces reused h1c/h1/h2) and the probe's PROTO.
type k8sCase struct {
	scenario, client, proto string
}

func (c k8sCase) name() string {
	return strings.Join(slices.DeleteFunc([]string{c.scenario, c.proto, c.client}, func(s string) bool { return s == "" }), "-")
}

// k8sCases are every scenario the operator can run from our image: the portable ones and
// those needing our extensions alike, since the runners run bin/k6.
func k8sCases() []k8sCase {
	var cases []k8sCase
	for _, sc := range names(runner.Throughput) {
		cases = append(cases, k8sCase{scenario: sc, client: runner.ClientK6})
		if strings.HasPrefix(sc, "reused-") && !strings.HasSuffix(sc, "-h3") {
			cases = append(cases, k8sCase{scenario: sc, client: runner.ClientNative})
		}
	}
	for _, p := range names(runner.Probes) {
		cases = append(cases, k8sCase{scenario: p})
	}
	// a probe over another protocol than its default: PROTO reaches the runners too
	return append(cases, k8sCase{scenario: "json", proto: "h1c"}, k8sCase{scenario: "ws", proto: "h1c"})
}

// TestK8sManifests runs `proxybench k8s` (make k8s) for every scenario with the real bin/k6 and
// checks what the cluster would be given: the TestRun fits k8s/testrun.schema.json, the
// ConfigMap holds the very archive and stays under 1 MiB, the archive passes
// `k6 inspect --execution-requirements` from another directory (the operator's initializer),
// it was made with the env the runners get, and the runners' command line keeps the scripts'
// tags next to the operator's instance_id.
func TestK8sManifests(t *testing.T) {
	h := newHarness(t)
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join(h.root, "k8s", "testrun.schema.json"))
	if err != nil {
		t.Fatalf("k8s/testrun.schema.json: %v", err)
	}
	const influx = "http://influxdb.example:8086/k6"
	for _, c := range k8sCases() {
		t.Run(c.name(), func(t *testing.T) {
			dir := t.TempDir()
			parallelism := "2"
			if runner.IsProbe(c.scenario) {
				parallelism = "1" // a probe samples on one VU: make k8s refuses to split it
			}
			targetURL := "https://proxy.example:8443"
			if strings.HasSuffix(c.scenario, "-h1c") || c.proto == "h1c" {
				targetURL = "http://10.11.12.13:8081"
			}
			cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), "k8s", "-scenario", c.scenario,
				"-parallelism", parallelism, "-image", "registry.example/proxybench-k6:test", "-target-url", targetURL,
				"-influxdb-url", influx, "-proto", c.proto, "-testid", "k8s-"+c.name(), "-out", dir)
			cmd.Dir = h.root
			cmd.Env = h.env("CLIENT=" + c.client)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("proxybench k8s: %v\n%s", err, out)
			}

			tr := readManifest(t, filepath.Join(dir, "testrun.yaml"))
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustJSON(t, tr)))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Fatalf("testrun.yaml does not fit k8s/testrun.schema.json:\n%v", err)
			}
			run := asTestRun(t, tr)
			archive := checkConfigMap(t, dir, run.Spec.Script.ConfigMap.Name, run.Spec.Script.ConfigMap.File)

			// the operator's initializer, from a directory with nothing of this clone
			elsewhere := t.TempDir()
			path := filepath.Join(elsewhere, run.Spec.Script.ConfigMap.File)
			if err := os.WriteFile(path, archive, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := k6In(h, elsewhere, "inspect", "--execution-requirements", path)
			if err != nil {
				t.Fatalf("k6 inspect --execution-requirements of the ConfigMap's archive, from %s: %v\n%s", elsewhere, err, out)
			}
			var req struct {
				MaxVUs int `json:"maxVUs"`
			}
			if err := json.Unmarshal(out, &req); err != nil || req.MaxVUs < run.Spec.Parallelism {
				t.Errorf("k6 inspect: maxVUs %d for parallelism %d (%v)", req.MaxVUs, run.Spec.Parallelism, err)
			}

			// made with the runners' env: what the archive saw in __ENV is what each runner has
			env := map[string]string{}
			for _, e := range run.Spec.Runner.Env {
				env[e.Name] = e.Value
			}
			for k, v := range map[string]string{"K6_NO_USAGE_REPORT": "true", "K6_AUTO_EXTENSION_RESOLUTION": "false", "TARGET_URL": targetURL} {
				if env[k] != v {
					t.Errorf("runner env %s=%q, want %q", k, env[k], v)
				}
			}
			meta := archiveMetadata(t, archive)
			for k, v := range env {
				switch k {
				case "K6_NO_USAGE_REPORT", "K6_AUTO_EXTENSION_RESOLUTION":
					continue // k6's own settings, not the script's
				}
				if meta.Env[k] != v {
					t.Errorf("the runners get %s=%q, the archive was made with %q", k, v, meta.Env[k])
				}
			}
			for k, v := range meta.Env {
				if _, ok := env[k]; !ok {
					t.Errorf("the archive was made with %s=%q, which the runners do not get", k, v)
				}
			}
			for _, k := range []string{"DURATION", "CONNECTIONS", "SAMPLES"} { // tinyEnv's, as make exports them
				if env[k] == "" {
					t.Errorf("the scenario knob %s set in the environment is not in the runners' env", k)
				}
			}
			if !strings.Contains(run.Spec.Arguments, "--out proxybench-influxdb="+influx) {
				t.Errorf("arguments %q do not stream to %s", run.Spec.Arguments, influx)
			}

			// The runners' command line: the operator adds its tags after spec.arguments. k6
			// archive takes the same flags as k6 run and writes the options they make.
			args := strings.Fields(run.Spec.Arguments)
			if i := slices.Index(args, "--out"); i >= 0 {
				args = slices.Delete(args, i, i+2) // not an archive flag
			}
			again := filepath.Join(elsewhere, "runner.tar")
			argv := append(append([]string{"archive"}, args...), "--tag", "instance_id=1", "--tag", "testrun_name=x", "-O", again, path)
			if out, err := k6In(h, elsewhere, argv...); err != nil {
				t.Fatalf("k6 %s: %v\n%s", strings.Join(argv, " "), err, out)
			}
			data, err := os.ReadFile(again)
			if err != nil {
				t.Fatal(err)
			}
			got := archiveMetadata(t, data).Options.Tags
			for k, v := range meta.Options.Tags {
				if got[k] != v {
					t.Errorf("on a runner the script's tag %s=%q is %q (tags: %v): spec.arguments must give it again", k, v, got[k], got)
				}
			}
			if got["instance_id"] != "1" {
				t.Errorf("the operator's instance_id tag is lost: %v", got)
			}
		})
	}
}

// readManifest reads a YAML manifest as kubectl does, into JSON's types.
func readManifest(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s is not YAML: %v", path, err)
	}
	return doc
}

// k8sTestRun is testrun.yaml, only the fields the tests read.
type k8sTestRun struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Parallelism int `json:"parallelism"`
		Script      struct {
			ConfigMap struct{ Name, File string } `json:"configMap"`
		} `json:"script"`
		Arguments string `json:"arguments"`
		Runner    struct {
			Env []struct{ Name, Value string } `json:"env"`
		} `json:"runner"`
	} `json:"spec"`
}

// asTestRun reads a TestRun readManifest read.
func asTestRun(t *testing.T, doc map[string]any) k8sTestRun {
	t.Helper()
	var run k8sTestRun
	if err := json.Unmarshal(mustJSON(t, doc), &run); err != nil {
		t.Fatal(err)
	}
	return run
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkConfigMap checks configmap.yaml against the TestRun's reference and returns the archive.
func checkConfigMap(t *testing.T, dir, name, file string) []byte {
	t.Helper()
	path := filepath.Join(dir, "configmap.yaml")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() >= configMapLimit {
		t.Errorf("configmap.yaml is %d bytes: a ConfigMap holds %d at most", st.Size(), configMapLimit)
	}
	var cm struct {
		APIVersion string                `json:"apiVersion"`
		Kind       string                `json:"kind"`
		Metadata   struct{ Name string } `json:"metadata"`
		BinaryData map[string]string     `json:"binaryData"`
	}
	if err := json.Unmarshal(mustJSON(t, readManifest(t, path)), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Metadata.Name != name {
		t.Errorf("configmap.yaml is %s %s %q; the TestRun wants v1 ConfigMap %q", cm.APIVersion, cm.Kind, cm.Metadata.Name, name)
	}
	archive, err := base64.StdEncoding.DecodeString(cm.BinaryData[file])
	if err != nil || len(archive) == 0 {
		t.Fatalf("configmap.yaml binaryData[%q]: %d bytes, %v", file, len(archive), err)
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil || !bytes.Equal(onDisk, archive) {
		t.Errorf("the ConfigMap's %s is not the archive k6 wrote beside it (%v)", file, err)
	}
	return archive
}

type archiveMeta struct {
	Env     map[string]string `json:"env"`
	Options struct {
		Tags map[string]string `json:"tags"`
	} `json:"options"`
}

// archiveMetadata is a k6 archive's metadata.json: the env and options k6 archived.
func archiveMetadata(t *testing.T, archive []byte) archiveMeta {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("the archive has no metadata.json")
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name != "metadata.json" {
			continue
		}
		var m archiveMeta
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			t.Fatalf("metadata.json: %v", err)
		}
		return m
	}
}

// k6In runs bin/k6 in dir, offline, with nothing of the user's environment that could point
// it back at this clone.
func k6In(h *harness, dir string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(h.root, "bin", "k6"), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return append(out.Bytes(), errOut.Bytes()...), err
	}
	return out.Bytes(), nil
}

// TestK8sRunnersDoTheSplit runs what `make k8s` writes as the k6-operator runs it, without a
// cluster: per runner, the operator's command line (its segment flags, spec.arguments, the
// archive, --paused, its --tag instance_id and testrun_name) with spec.runner.env, each in a
// directory of its own, then the starter's resume through each runner's REST API. The target
// is bin/upstream on 127.0.0.2, standing in for the cluster's view of a remote proxy. Each
// runner does its share and is valid on its own (SEGMENTS), the shares add up to the plan, and
// every sample carries the scripts' tags and its runner's instance_id.
func TestK8sRunnersDoTheSplit(t *testing.T) {
	h := newHarness(t)
	const runners, requests = 2, 60
	addr := startUpstreamOn(t, h, "127.0.0.2")
	_, port, _ := net.SplitHostPort(addr)

	// The manifests name the target as the cluster would; the runners below are given the
	// upstream's loopback address instead, which make k8s refuses (no pod reaches it).
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"), "k8s", "-scenario", "fresh-h1c",
		"-parallelism", strconv.Itoa(runners), "-image", "registry.example/proxybench-k6:test",
		"-target-url", "http://far.example:"+port, "-target", "far", "-testid", "k8s-split", "-out", dir)
	cmd.Dir = h.root
	cmd.Env = h.env("REQUESTS="+strconv.Itoa(requests), "FRESH_CONNECTIONS=4")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("proxybench k8s: %v\n%s", err, out)
	}
	var run struct {
		Metadata struct{ Name string } `json:"metadata"`
		Spec     struct {
			Parallelism int    `json:"parallelism"`
			Arguments   string `json:"arguments"`
			Runner      struct {
				Env []struct{ Name, Value string } `json:"env"`
			} `json:"runner"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(mustJSON(t, readManifest(t, filepath.Join(dir, "testrun.yaml"))), &run); err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(filepath.Join(dir, "archive.tar"))
	if err != nil {
		t.Fatal(err)
	}

	before := upstreamAccepted(t, "http://"+addr)
	type pod struct {
		dir, api string
		cmd      *exec.Cmd
		out      bytes.Buffer
		done     chan error
	}
	pods := make([]*pod, run.Spec.Parallelism)
	for i := range pods {
		p := &pod{dir: t.TempDir(), api: net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t, "127.0.0.1"))), done: make(chan error, 1)}
		script := filepath.Join(p.dir, "test", "archive.tar") // the ConfigMap, mounted as /test/
		if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(script, archive, 0o644); err != nil {
			t.Fatal(err)
		}
		index := i + 1 // the operator counts its runners from 1
		argv := append([]string{"run", "--quiet"}, operatorSegmentArgs(index, run.Spec.Parallelism)...)
		argv = append(argv, strings.Fields(run.Spec.Arguments)...)
		argv = append(argv, script, "--address="+p.api, "--paused",
			"--tag", "instance_id="+strconv.Itoa(index), "--tag", "testrun_name="+run.Metadata.Name,
			"--out", "json="+filepath.Join(p.dir, "samples.json"))
		p.cmd = exec.Command(filepath.Join(h.root, "bin", "k6"), argv...)
		p.cmd.Dir = p.dir
		p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.dir}
		for _, e := range run.Spec.Runner.Env {
			switch e.Name {
			case "TARGET_URL":
				e.Value = "http://" + addr
			case "SUMMARY_JSON":
				e.Value = filepath.Join(p.dir, "result.json") // a pod's /tmp is its own
			}
			p.cmd.Env = append(p.cmd.Env, e.Name+"="+e.Value)
		}
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { p.done <- p.cmd.Wait() }()
		t.Cleanup(func() {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
				<-p.done //nolint:errcheck // killed: its exit status says nothing
			}
		})
		pods[i] = p
	}

	// the starter: once every runner is paused with its VUs ready, resume them all
	for i, p := range pods {
		deadline := time.Now().Add(time.Minute)
		for !pausedBeforeRun(p.api) {
			if time.Now().After(deadline) {
				t.Fatalf("runner %d: its REST API at %s never said paused and ready\n%s", i+1, p.api, p.out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for i, p := range pods {
		req, _ := http.NewRequest(http.MethodPatch, "http://"+p.api+"/v1/status",
			strings.NewReader(`{"data":{"type":"status","id":"default","attributes":{"paused":false}}}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("runner %d: resume: %v", i+1, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("runner %d: resume: %s", i+1, res.Status)
		}
	}

	var total, conns float64
	for i, p := range pods {
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("runner %d: k6 run: %v\n%s", i+1, err, p.out.String())
				continue
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("runner %d did not end within 2 minutes\n%s", i+1, p.out.String())
		}
		r, err := result.LoadResult(filepath.Join(p.dir, "result.json"))
		if err != nil {
			t.Fatalf("runner %d: %v\n%s", i+1, err, p.out.String())
		}
		if !r.Valid || r.Target != "far" {
			t.Errorf("runner %d: valid %v %v, target %q; want valid, target far", i+1, r.Valid, r.Invalid, r.Target)
		}
		total += r.Requests
		if r.NewConnections != nil {
			conns += *r.NewConnections
		}
		checkSampleTags(t, filepath.Join(p.dir, "samples.json"), map[string]string{
			"testid": "k8s-split", "target": "far", "mode": "fresh", "instance_id": strconv.Itoa(i + 1),
		})
	}
	if total != requests || conns != requests {
		t.Errorf("the runners sent %v requests on %v new connections in all, want the plan's %d on as many", total, conns, requests)
	}
	if got := upstreamAccepted(t, "http://"+addr) - before; got < requests {
		t.Errorf("the upstream accepted %d connections, want at least %d", got, requests)
	}
}

// operatorSegmentArgs are the k6-operator's execution segment flags for runner index (from 1)
// of total (its pkg/segmentation): none for a single runner.
func operatorSegmentArgs(index, total int) []string {
	if total <= 1 {
		return nil
	}
	part := func(i int) string {
		switch i {
		case 0:
			return "0"
		case total:
			return "1"
		}
		return fmt.Sprintf("%d/%d", i, total)
	}
	seq := []string{"0"}
	for i := 1; i < total; i++ {
		seq = append(seq, fmt.Sprintf("%d/%d", i, total))
	}
	seq = append(seq, "1")
	return []string{
		"--execution-segment=" + part(index-1) + ":" + part(index),
		"--execution-segment-sequence=" + strings.Join(seq, ","),
	}
}

// pausedBeforeRun tells whether k6's REST API at api says it is paused with its VUs ready
// (lib.ExecutionStatusPausedBeforeRun, 4).
func pausedBeforeRun(api string) bool {
	res, err := http.Get("http://" + api + "/v1/status")
	if err != nil {
		return false
	}
	defer res.Body.Close()
	var st struct {
		Data struct {
			Attributes struct {
				Status int `json:"status"`
			} `json:"attributes"`
		} `json:"data"`
	}
	return res.StatusCode == http.StatusOK && json.NewDecoder(res.Body).Decode(&st) == nil && st.Data.Attributes.Status == 4
}

// checkSampleTags checks that every measured http_reqs sample of k6's JSON output has want.
func checkSampleTags(t *testing.T, path string, want map[string]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		var s struct {
			Type   string `json:"type"`
			Metric string `json:"metric"`
			Data   struct {
				Tags map[string]string `json:"tags"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &s) != nil || s.Type != "Point" || s.Metric != "http_reqs" {
			continue
		}
		n++
		for k, v := range want {
			if s.Data.Tags[k] != v {
				t.Fatalf("%s: an http_reqs sample has %s=%q, want %q (tags %v)", path, k, s.Data.Tags[k], v, s.Data.Tags)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no http_reqs sample", path)
	}
}

// startUpstreamOn starts bin/upstream's cleartext listener on host and returns its address.
func startUpstreamOn(t *testing.T, h *harness, host string) string {
	t.Helper()
	addr := net.JoinHostPort(host, strconv.Itoa(freePort(t, host)))
	ctx, cancel := context.WithCancel(context.Background())
	up := exec.CommandContext(ctx, filepath.Join(h.root, "bin", "upstream"), "-h1c", addr)
	var out bytes.Buffer
	up.Stdout, up.Stderr = &out, &out
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = up.Wait() })
	waitHTTP(t, "http://"+addr+"/debug/conns", &out)
	return addr
}
