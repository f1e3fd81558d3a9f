package k8s

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

var dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestNameIsAShortDNSLabel(t *testing.T) {
	seen := map[string]string{}
	for _, tc := range []struct{ cell, testid string }{
		{"reused-h2", "20261124-071656"},
		{"json-h1c", "20261124-071656"},
		{"reused-h2", "My_Run.1"},
		{"reused-h2", "my-run-1"},
		{"fresh-h3", strings.Repeat("a", 128)},
		{"fresh-h3", strings.Repeat("a", 127) + "b"},
		{"upload-h2", "-x-"},
	} {
		n := objectName(tc.cell, tc.testid)
		if !dnsLabelRE.MatchString(n) || len(n) > maxNameLen {
			t.Errorf("objectName(%q, %q) = %q: not a DNS label of %d characters at most", tc.cell, tc.testid, n, maxNameLen)
		}
		key := tc.cell + "/" + tc.testid
		if other, dup := seen[n]; dup {
			t.Errorf("objectName gives %q to both %s and %s", n, other, key)
		}
		seen[n] = key
	}
}

func TestRunnerArgsRepeatTheScriptsTags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tags   map[string]string
		influx string
		want   string
		err    string
	}{
		{
			"tags sorted",
			map[string]string{"testid": "t1", "mode": "reused", "target": "nginx"},
			"",
			"--tag mode=reused --tag target=nginx --tag testid=t1", "",
		},
		{
			"with the output",
			map[string]string{"testid": "t1"},
			"http://influx.example:8086/k6?mode=raw&pushInterval=2s",
			"--tag testid=t1 --out proxybench-influxdb=http://influx.example:8086/k6?mode=raw&pushInterval=2s", "",
		},
		{"no tags", nil, "", "", ""},
		{"a tag the shell would read", map[string]string{"target": "a;rm"}, "", "", "the script's tag target="},
		{"a tag with a space", map[string]string{"target": "a b"}, "", "", "the script's tag target="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runnerArgs(tc.tags, tc.influx)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("runnerArgs(%v) = %q, %v: want an error saying %q", tc.tags, got, err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case got != tc.want:
				t.Errorf("runnerArgs(%v, %q) = %q, want %q", tc.tags, tc.influx, got, tc.want)
			}
		})
	}
}

// compileTestRunSchema compiles testrun.schema.json, offline (its metaschema is built in).
func compileTestRunSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile("testrun.schema.json")
	if err != nil {
		t.Fatalf("k8s/testrun.schema.json: %v", err)
	}
	return sch
}

// validManifests is what build makes of a small archive, and its TestRun as JSON.
func validManifests(t *testing.T, influx string, separate bool) (*manifests, map[string]any) {
	t.Helper()
	s := validSettings()
	s.InfluxURL, s.Separate = influx, separate
	env := s.RunnerEnv(getenv(map[string]string{"DURATION": "20s"}))
	m, err := build(s, []byte("an archive"), inspected{Tags: map[string]string{"testid": s.TestID, "mode": "reused"}, MaxVUs: 32}, env)
	if err != nil {
		t.Fatal(err)
	}
	return m, asJSON(t, m.TestRun)
}

// asJSON is v as the validator reads a document: through its YAML, as kubectl would read it.
func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	y, err := toYAML(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(doc)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return inst.(map[string]any)
}

func TestTestRunFitsTheSchema(t *testing.T) {
	sch := compileTestRunSchema(t)
	for _, tc := range []struct {
		influx   string
		separate bool
	}{{"", false}, {"http://influxdb.monitoring:8086/k6", false}, {"", true}} {
		influx := tc.influx
		m, doc := validManifests(t, influx, tc.separate)
		if err := sch.Validate(doc); err != nil {
			t.Errorf("INFLUXDB_URL=%q separate=%v: the TestRun does not fit k8s/testrun.schema.json:\n%v", influx, tc.separate, err)
		}
		if sep, _ := doc["spec"].(map[string]any)["separate"].(bool); sep != tc.separate {
			t.Errorf("separate=%v: spec.separate is %v", tc.separate, sep)
		}
		// the operator deletes the pods, logs and all, at cleanup: only when InfluxDB keeps the run
		if cleanup, _ := doc["spec"].(map[string]any)["cleanup"].(string); (cleanup == "post") != (influx != "") {
			t.Errorf("INFLUXDB_URL=%q: spec.cleanup is %q", influx, cleanup)
		}
		env := map[string]string{}
		for _, e := range m.TestRun.Spec.Runner.Env {
			env[e.Name] = e.Value
		}
		for k, v := range map[string]string{"K6_NO_USAGE_REPORT": "true", "K6_AUTO_EXTENSION_RESOLUTION": "false", "DURATION": "20s", "TARGET_URL": "https://proxy.example:8443"} {
			if env[k] != v {
				t.Errorf("runner env %s=%q, want %q", k, env[k], v)
			}
		}
		if got := strings.Contains(m.TestRun.Spec.Arguments, "--out proxybench-influxdb="); got != (influx != "") {
			t.Errorf("INFLUXDB_URL=%q, arguments %q", influx, m.TestRun.Spec.Arguments)
		}
	}
}

// The schema can fail: each row breaks one field of a valid TestRun as a hand edit or a bug
// could, and the validator must refuse it, naming the field.
func TestSchemaRejectsBrokenTestRuns(t *testing.T) {
	sch := compileTestRunSchema(t)
	spec := func(d map[string]any) map[string]any { return d["spec"].(map[string]any) }
	for _, tc := range []struct {
		name   string
		mutate func(d map[string]any)
		where  string // in the validator's error
	}{
		{"no parallelism", func(d map[string]any) { delete(spec(d), "parallelism") }, "parallelism"},
		{"parallelism as a string", func(d map[string]any) { spec(d)["parallelism"] = "2" }, "/spec/parallelism"},
		{"parallelism 0", func(d map[string]any) { spec(d)["parallelism"] = json.Number("0") }, "/spec/parallelism"},
		{"parallelism beyond int32", func(d map[string]any) { spec(d)["parallelism"] = json.Number("2147483648") }, "/spec/parallelism"},
		{"parallelism fractional", func(d map[string]any) { spec(d)["parallelism"] = json.Number("1.5") }, "/spec/parallelism"},
		{"no script", func(d map[string]any) { delete(spec(d), "script") }, "script"},
		{"no configMap name", func(d map[string]any) {
			delete(spec(d)["script"].(map[string]any)["configMap"].(map[string]any), "name")
		}, "/spec/script/configMap"},
		{"configMap file with a path", func(d map[string]any) {
			spec(d)["script"].(map[string]any)["configMap"].(map[string]any)["file"] = "dir/archive.tar"
		}, "/spec/script/configMap/file"},
		{"cleanup not in the enum", func(d map[string]any) { spec(d)["cleanup"] = "always" }, "/spec/cleanup"},
		{"misspelt field", func(d map[string]any) { spec(d)["paralellism"] = json.Number("2") }, "paralellism"},
		{"wrong kind", func(d map[string]any) { d["kind"] = "K6" }, "/kind"},
		{"wrong apiVersion", func(d map[string]any) { d["apiVersion"] = "k6.io/v1" }, "/apiVersion"},
		{"name not a DNS label", func(d map[string]any) { d["metadata"].(map[string]any)["name"] = "Proxy_Bench" }, "/metadata/name"},
		{"name too long", func(d map[string]any) { d["metadata"].(map[string]any)["name"] = strings.Repeat("a", 51) }, "/metadata/name"},
		{"no runner image", func(d map[string]any) { delete(spec(d)["runner"].(map[string]any), "image") }, "/spec/runner"},
		{"env var without a name", func(d map[string]any) {
			r := spec(d)["runner"].(map[string]any)
			r["env"] = append(r["env"].([]any), map[string]any{"value": "x"})
		}, "/spec/runner/env"},
		{"env value not a string", func(d map[string]any) {
			r := spec(d)["runner"].(map[string]any)
			r["env"] = append(r["env"].([]any), map[string]any{"name": "N", "value": json.Number("1")})
		}, "/spec/runner/env"},
		{"arguments with a double space", func(d map[string]any) { spec(d)["arguments"] = "--tag a=b  --tag c=d" }, "/spec/arguments"},
		{"paused not a boolean string", func(d map[string]any) { spec(d)["paused"] = "maybe" }, "/spec/paused"},
		{"separate as a string", func(d map[string]any) { spec(d)["separate"] = "true" }, "/spec/separate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, doc := validManifests(t, "", false)
			tc.mutate(doc)
			err := sch.Validate(doc)
			if err == nil {
				t.Fatalf("the schema accepted a TestRun with %s", tc.name)
			}
			if !strings.Contains(err.Error(), tc.where) {
				t.Errorf("the schema refused %s, but its error does not name %s:\n%v", tc.name, tc.where, err)
			}
		})
	}
}

func TestManifestsRefuse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		archive int
		maxVUs  int
		want    string
	}{
		{"an archive over a ConfigMap's 1 MiB", configMapLimit + 1, 32, "over a ConfigMap's 1048576"},
		{"more runners than VUs", 10, 1, "PARALLELISM=2 is more than the 1 VU(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(validSettings(), make([]byte, tc.archive), inspected{MaxVUs: tc.maxVUs}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("build: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// On this machine's node (Settings.Local) the runners see the host's files at their own paths,
// name their result files after their Job, and pull no image; the schema takes all of it.
func TestLocalTestRun(t *testing.T) {
	s := validSettings()
	s.Local = &Local{
		StarterImage: "proxybench.local/k6:abc",
		Mounts:       []Mount{{Path: "/srv/ca.pem"}, {Path: "/srv/results/segments", Writable: true}},
		Env:          []EnvVar{{Name: "SUMMARY_JSON", Value: "/srv/results/segments/$(JOB_NAME).json"}},
	}
	m, err := build(s, []byte("an archive"), inspected{MaxVUs: 32}, s.RunnerEnv(getenv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileTestRunSchema(t).Validate(asJSON(t, m.TestRun)); err != nil {
		t.Errorf("the TestRun does not fit k8s/testrun.schema.json:\n%v", err)
	}
	spec := m.TestRun.Spec
	if spec.Runner.ImagePullPolicy != "Never" || spec.Starter == nil || spec.Starter.ImagePullPolicy != "Never" || spec.Starter.Image != s.Local.StarterImage {
		t.Errorf("runner pull policy %q, starter %+v: want Never and the starter image %s", spec.Runner.ImagePullPolicy, spec.Starter, s.Local.StarterImage)
	}
	for i, want := range []volumeMount{{Name: "host-0", MountPath: "/srv/ca.pem", ReadOnly: true}, {Name: "host-1", MountPath: "/srv/results/segments"}} {
		if i >= len(spec.Runner.VolumeMounts) || spec.Runner.VolumeMounts[i] != want {
			t.Errorf("volume mount %d: got %+v, want %+v", i, spec.Runner.VolumeMounts, want)
		} else if spec.Runner.Volumes[i].HostPath.Path != want.MountPath {
			t.Errorf("volume %d: host path %q, want %q", i, spec.Runner.Volumes[i].HostPath.Path, want.MountPath)
		}
	}
	// the summary's path names the pod's Job: only the runners' env has it, never the archive's
	var last EnvVar
	for _, e := range spec.Runner.Env {
		if e.Name == "SUMMARY_JSON" {
			last = e
		}
	}
	if last.Value != s.Local.Env[0].Value {
		t.Errorf("SUMMARY_JSON the runners see last: %q, want %q", last.Value, s.Local.Env[0].Value)
	}
}
