package k8s

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

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

// fakeK6 is a k6 that archives by writing "an archive" to -O's file and inspects with
// inspectOut, or fails as k6 does when failArchive; it records its arguments and environment.
func fakeK6(t *testing.T, inspectOut string, failArchive bool) (K6, string) {
	t.Helper()
	dir := t.TempDir()
	record := filepath.Join(dir, "calls")
	fail := ""
	if failArchive {
		fail = `printf '%s\n' 'level=error msg="Error: TARGET_URL is down\n\tat setup (file:///x.js:1:1)"' >&2; exit 107`
	}
	script := `#!/bin/sh
echo "$* | NO_USAGE_REPORT=$K6_NO_USAGE_REPORT FROM_HERE=$FROM_HERE" >> ` + record + `
case "$1" in
archive)
	` + fail + `
	while [ $# -gt 0 ]; do [ "$1" = -O ] && printf 'an archive' > "$2"; shift; done ;;
inspect) echo '` + inspectOut + `' ;;
esac
`
	path := filepath.Join(dir, "k6")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return K6{Path: path, Env: []string{"PATH=" + os.Getenv("PATH")}, Elsewhere: t.TempDir()}, record
}

// Write leaves either the three files, or, when it made the folder, no folder at all.
func TestWrite(t *testing.T) {
	const inspectOK = `{"tags":{"testid":"k8s-test","mode":"reused"},"maxVUs":4}`
	for _, tc := range []struct {
		name        string
		inspect     string
		failArchive bool
		dirBefore   bool
		err         string // in Write's error; "" is none
	}{
		{"written", inspectOK, false, false, ""},
		{"into a folder that was there", inspectOK, false, true, ""},
		{"k6 archive fails", inspectOK, true, false, "k6 archive reused-h2.js: exit status 107: TARGET_URL is down"},
		{"k6 archive fails in a folder that was there", inspectOK, true, true, "k6 archive reused-h2.js"},
		{"k6 inspect prints no JSON", "not json", false, false, "k6 inspect --execution-requirements of the archive printed no JSON"},
		{"more runners than VUs", `{"maxVUs":1}`, false, false, "PARALLELISM=2 is more than the 1 VU(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FROM_HERE", "leaked") // this process's environment must not reach k6
			k6, record := fakeK6(t, tc.inspect, tc.failArchive)
			dir := filepath.Join(t.TempDir(), "run", "k8s", "reused-h2")
			if tc.dirBefore {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s := validSettings()
			env := s.RunnerEnv(getenv(map[string]string{"DURATION": "20s"}))
			w, err := Write(context.Background(), Job{Settings: s, K6: k6, Script: "/x/scenarios/reused-h2.js", ScenariosDir: "/x/scenarios", Dir: dir, Env: env})
			if _, statErr := os.Stat(dir); (statErr == nil) != (tc.err == "" || tc.dirBefore) {
				t.Errorf("the folder is there: %v (it was before: %v, error: %v)", statErr == nil, tc.dirBefore, err)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Write: %v, want an error saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := (Written{Name: "proxybench-reused-h2-k8s-test", MaxVUs: 4, ArchiveBytes: len("an archive")}); *w != want {
				t.Errorf("Write = %+v, want %+v", *w, want)
			}
			calls, _ := os.ReadFile(record)
			if !strings.Contains(string(calls), " -e TARGET_URL=https://proxy.example:8443 ") || !strings.Contains(string(calls), " -e DURATION=20s ") ||
				!strings.Contains(string(calls), "NO_USAGE_REPORT=true FROM_HERE=\n") || strings.Contains(string(calls), "leaked") {
				t.Errorf("k6 was run as\n%s\nwant the runners' env as -e, offline, and nothing else of this process's environment", calls)
			}
			var cm struct {
				Kind       string            `yaml:"kind"`
				BinaryData map[string]string `yaml:"binaryData"`
			}
			readYAML(t, filepath.Join(dir, "configmap.yaml"), "the k6 archive of scenarios/reused-h2.js", &cm)
			if archive, err := base64.StdEncoding.DecodeString(cm.BinaryData[archiveKey]); cm.Kind != "ConfigMap" || string(archive) != "an archive" {
				t.Errorf("configmap.yaml: %s with %s %q (%v)", cm.Kind, archiveKey, archive, err)
			}
			var tr testRun
			readYAML(t, filepath.Join(dir, "testrun.yaml"), "reused-h2 against https://proxy.example:8443, split 2 ways", &tr)
			if tr.Kind != "TestRun" || tr.Spec.Script.ConfigMap.Name != w.Name || tr.Spec.Arguments != "--tag mode=reused --tag testid=k8s-test" {
				t.Errorf("testrun.yaml: %+v", tr)
			}
			if data, err := os.ReadFile(filepath.Join(dir, archiveKey)); err != nil || string(data) != "an archive" {
				t.Errorf("%s: %q, %v", archiveKey, data, err)
			}
		})
	}
}

// readYAML reads a manifest into v, after checking its head says what it is and how to apply it.
func readYAML(t *testing.T, path, says string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := "# Made by `make k8s` (proxybench k8s): " + says
	apply := "\n# kubectl apply -f " + filepath.Dir(path) + "/  (k8s/README.md)\n"
	if !strings.HasPrefix(string(data), head) || !strings.Contains(string(data), apply) {
		t.Errorf("%s does not begin with %q and %q:\n%s", path, head, apply, data)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
