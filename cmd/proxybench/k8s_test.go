package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// k8sEnv clears what `make` exports and `make k8s` reads, then sets a valid set, so that each
// row of a table changes only what it tests.
func k8sEnv(t *testing.T) {
	t.Helper()
	badInputEnv(t)
	for k, v := range map[string]string{
		"SCENARIO": "reused-h2", "PARALLELISM": "2", "IMAGE": "registry.example/proxybench-k6:v1",
		"TARGET_URL": "https://proxy.example:8443", "INFLUXDB_URL": "", "CLIENT": "", "TESTID": "k8s-test",
		"GODEBUG": "", "RATE": "", "K6_CLOUD_PROJECT_ID": "", "SUMMARY_JSON": "", "SEGMENTS": "",
	} {
		t.Setenv(k, v)
	}
}

// Every bad input to `make k8s` is refused before k6 runs, by an error naming the variable.
func TestK8sBadInputNamesTheVariable(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		want             string // in the error
	}{
		{"no scenario", "SCENARIO", "", "no SCENARIO"},
		{"unknown scenario", "SCENARIO", "reused-h4", `unknown SCENARIO "reused-h4"`},
		{"proto of a load scenario", "PROTO", "h1", "PROTO=h1: PROTO applies to the probes only"},
		{"no parallelism", "PARALLELISM", "", `PARALLELISM="": want a whole number of at least 1`},
		{"zero parallelism", "PARALLELISM", "0", `PARALLELISM="0": want a whole number of at least 1`},
		{"negative parallelism", "PARALLELISM", "-2", `PARALLELISM="-2"`},
		{"fractional parallelism", "PARALLELISM", "1.5", `PARALLELISM="1.5"`},
		{"parallelism beyond int32", "PARALLELISM", "2147483648", `PARALLELISM="2147483648"`},
		{"no image", "IMAGE", "", "no IMAGE"},
		{"image with a space", "IMAGE", "a b", `IMAGE="a b"`},
		{"no target url", "TARGET_URL", "", "no TARGET_URL: the runners run in a cluster, which cannot reach this machine's loopback stack"},
		{"loopback target url", "TARGET_URL", "https://127.0.0.1:8441", "is this machine's loopback stack"},
		{"the stack's hostname", "TARGET_URL", "https://bench.test:8441", "is this machine's loopback stack"},
		{"localhost", "TARGET_URL", "http://localhost:8081", "is this machine's loopback stack"},
		{"not a url", "TARGET_URL", "proxy.example:8443", `TARGET_URL="proxy.example:8443": want a base URL`},
		{"ftp", "TARGET_URL", "ftp://proxy.example", "TARGET_URL="},
		{"target name with a space", "TARGET", "my proxy", `TARGET="my proxy"`},
		{"influxdb not a url", "INFLUXDB_URL", "influx:8086", `INFLUXDB_URL="influx:8086"`},
		{"unknown profile", "PROFILE", "huge", `unknown PROFILE "huge"`},
		{"bad testid", "TESTID", "a b", `TESTID "a b"`},
		{"bad duration", "DURATION", "10", `DURATION="10"`},
		{"bad count", "CONNECTIONS", "0", `CONNECTIONS="0"`},
		{"bad client", "CLIENT", "curl", `CLIENT="curl"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k8sEnv(t)
			t.Setenv(tc.key, tc.value)
			_, err := parseK8sFlags(nil)
			if err == nil {
				t.Fatalf("%s=%q was accepted", tc.key, tc.value)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s=%q: error\n%v\ndoes not say %q", tc.key, tc.value, err, tc.want)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		k8sEnv(t)
		f, err := parseK8sFlags(nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.parallelism != 2 || f.target != "" {
			t.Errorf("parsed %+v", f)
		}
	})
	t.Run("TARGET=all is the Makefile's default, no name", func(t *testing.T) {
		k8sEnv(t)
		t.Setenv("TARGET", "all")
		if f, err := parseK8sFlags(nil); err != nil || f.target != "" {
			t.Errorf("TARGET=all: %+v, %v", f, err)
		}
	})
}

var dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestK8sNameIsAShortDNSLabel(t *testing.T) {
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
		n := k8sName(tc.cell, tc.testid)
		if !dnsLabelRE.MatchString(n) || len(n) > maxNameLen {
			t.Errorf("k8sName(%q, %q) = %q: not a DNS label of %d characters at most", tc.cell, tc.testid, n, maxNameLen)
		}
		key := tc.cell + "/" + tc.testid
		if other, dup := seen[n]; dup {
			t.Errorf("k8sName gives %q to both %s and %s", n, other, key)
		}
		seen[n] = key
	}
}

// toYAML keeps every value as JSON has it, however YAML would read it unquoted.
func TestToYAMLKeepsEveryValue(t *testing.T) {
	v := map[string]any{
		"strings": []string{"yes", "no", "on", "null", "~", "0755", "1e3", "a: b", "- x", "#c", "", " lead", "trail ", "multi\nline", "tab\there", `q"uote`, "back\\slash", "ünïcødé", "<&>", "[x]", "{y}"},
		"numbers": []any{0, -1, 2.5, 1 << 40},
		"bools":   []bool{true, false},
		"nested":  map[string]any{"empty": map[string]any{}, "none": []any{}, "list": []any{map[string]any{"a": 1, "b": []any{"c"}}, []any{1, 2}}},
		"yes":     "a key YAML 1.1 reads as a boolean",
		"a b":     "a key with a space",
		"k6.io/x": "a key with a dot and a slash",
		"nil":     nil,
	}
	out, err := toYAML(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, out)
	}
	want, _ := json.Marshal(v)
	got, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	var w, g any
	_ = json.Unmarshal(want, &w)
	_ = json.Unmarshal(got, &g)
	if ws, gs := mustJSON(w), mustJSON(g); ws != gs {
		t.Errorf("YAML read back differs from the value written:\nwant %s\ngot  %s\nYAML:\n%s", ws, gs, out)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestK8sArgsRepeatTheScriptsTags(t *testing.T) {
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
			got, err := k8sArgs(tc.tags, tc.influx)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("k8sArgs(%v) = %q, %v: want an error saying %q", tc.tags, got, err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case got != tc.want:
				t.Errorf("k8sArgs(%v, %q) = %q, want %q", tc.tags, tc.influx, got, tc.want)
			}
		})
	}
}

// compileTestRunSchema compiles k8s/testrun.schema.json, offline (its metaschema is built in).
func compileTestRunSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "k8s", "testrun.schema.json"))
	if err != nil {
		t.Fatalf("k8s/testrun.schema.json: %v", err)
	}
	return sch
}

// validManifests is what buildManifests makes of a small archive, as JSON.
func validManifests(t *testing.T, influx string, args ...string) (*k8sManifests, map[string]any) {
	t.Helper()
	k8sEnv(t)
	t.Setenv("DURATION", "20s")
	t.Setenv("INFLUXDB_URL", influx)
	f, err := parseK8sFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	m, err := buildManifests(f, []byte("an archive"), inspected{Tags: map[string]string{"testid": f.testid, "mode": "reused"}, MaxVUs: 32}, f.env(os.Getenv))
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

func TestK8sTestRunFitsTheSchema(t *testing.T) {
	sch := compileTestRunSchema(t)
	for _, tc := range []struct {
		influx string
		args   []string
	}{{"", nil}, {"http://influxdb.monitoring:8086/k6", nil}, {"", []string{"-separate"}}} {
		influx := tc.influx
		m, doc := validManifests(t, influx, tc.args...)
		if err := sch.Validate(doc); err != nil {
			t.Errorf("INFLUXDB_URL=%q %v: the TestRun does not fit k8s/testrun.schema.json:\n%v", influx, tc.args, err)
		}
		if sep, _ := doc["spec"].(map[string]any)["separate"].(bool); sep != slices.Contains(tc.args, "-separate") {
			t.Errorf("%v: spec.separate is %v", tc.args, sep)
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
func TestK8sSchemaRejectsBrokenTestRuns(t *testing.T) {
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
			_, doc := validManifests(t, "")
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

func TestK8sManifestsRefuse(t *testing.T) {
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
			k8sEnv(t)
			f, err := parseK8sFlags(nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = buildManifests(f, make([]byte, tc.archive), inspected{MaxVUs: tc.maxVUs}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("buildManifests: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// The runners get what the scripts read and the user set, and what a runner needs; never a
// path of this machine.
func TestK8sRunnerEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]string
		want map[string]string // "" is absent
	}{
		{
			"split",
			map[string]string{"PARALLELISM": "3", "TARGETS_FILE": "/here/targets.json", "PWD": "/here", "SUMMARY_JSON": "/here/r.json", "STREAMS": "8"},
			map[string]string{"SEGMENTS": "3", "TARGETS_FILE": "", "PWD": "", "SUMMARY_JSON": podSummary, "STREAMS": "8", "GODEBUG": ""},
		},
		{"one runner", map[string]string{"PARALLELISM": "1"}, map[string]string{"SEGMENTS": ""}},
		{"h1 over TLS", map[string]string{"SCENARIO": "fresh-h1", "GODEBUG": "tlsmlkem=0"}, map[string]string{"GODEBUG": "tlsmlkem=0,http2client=0"}},
		{"a probe over h1", map[string]string{"SCENARIO": "json", "PROTO": "h1", "PARALLELISM": "1"}, map[string]string{"GODEBUG": "http2client=0", "PROTO": "h1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k8sEnv(t)
			for k, v := range tc.set {
				t.Setenv(k, v)
			}
			f, err := parseK8sFlags(nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, kv := range f.env(os.Getenv) {
				got[kv[0]] = kv[1]
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("runner env %s=%q, want %q (env %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestK6MessageIsTheScripts(t *testing.T) {
	for _, tc := range []struct{ stderr, want string }{
		{
			`time="2026-11-24T07:25:18Z" level=error msg="Error: TARGET_URL http://a:1 is http:// and h2 is https://: give the target's TLS listener\n\tat origin (file:///x/targets.js:141:13(49))\n" hint="script exception" source=stacktrace`,
			"TARGET_URL http://a:1 is http:// and h2 is https://: give the target's TLS listener",
		},
		{`level=error msg="a \"quoted\" word"` + "\n" + `level=error msg="second"`, `a "quoted" word; second`},
		{"not logfmt at all\n", "not logfmt at all"},
	} {
		if got := k6Message(tc.stderr); got != tc.want {
			t.Errorf("k6Message(%q) = %q, want %q", tc.stderr, got, tc.want)
		}
	}
}
