package cloud

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/engine"
)

func TestRunArgs(t *testing.T) {
	t.Parallel()
	environ := []string{
		"HOME=/root", "K6_CLOUD_TOKEN=secret", "TARGET=all", "DURATION=30s", "PWD=/work",
		"TARGETS_FILE=/work/t.json", "TESTID=old", "CONNECTIONS=64",
	}
	set := map[string]string{"TARGET_URL": "https://proxy.example:8443", "TESTID": "new", "PROTO": ""}
	got := strings.Join(runArgs(environ, set, []string{"--vus", "2"}, "s.js"), " ")
	want := "cloud run -e DURATION=30s -e CONNECTIONS=64 -e TARGET_URL=https://proxy.example:8443 -e TESTID=new --vus 2 s.js"
	if got != want {
		t.Fatalf("runArgs:\n got %s\nwant %s", got, want)
	}
}

// fakeK6 stands in for bin/k6: it logs each call (with K6_NO_USAGE_REPORT, which every call
// must set) to FAKE_K6_LOG, answers `k6 deps` with FAKE_K6_DEPS and ends `k6 cloud run` with
// FAKE_K6_EXIT.
const fakeK6 = `#!/bin/sh
printf '%s %s\n' "$K6_NO_USAGE_REPORT" "$*" >>"$FAKE_K6_LOG"
case "$1" in
deps) printf '%s' "$FAKE_K6_DEPS" ;;
cloud) echo "cloud run output"; exit "${FAKE_K6_EXIT:-0}" ;;
esac
`

// RunRemote refuses what the load generators cannot run and a missing login before `k6 cloud
// run`, and runs it with the script's variables as -e flags otherwise.
func TestRunRemote(t *testing.T) {
	t.Parallel()
	k6Path := filepath.Join(t.TempDir(), "k6")
	if err := os.WriteFile(k6Path, []byte(fakeK6), 0o700); err != nil {
		t.Fatal(err)
	}
	cellsOf := func(scenario, proto string) []engine.Cell {
		cells, err := engine.CellsFor(scenario, proto)
		if err != nil {
			t.Fatalf("CellsFor(%q, %q): %v", scenario, proto, err)
		}
		return cells
	}
	loggedIn := map[string]string{"K6_CLOUD_TOKEN": "t", "K6_CLOUD_STACK_ID": "7"}
	noDeps := `{"buildDependencies":{"k6":">=1.0"}}`
	tests := []struct {
		name  string
		cells []engine.Cell
		deps  string            // k6 deps' answer
		exit  string            // k6 cloud run's exit status
		login map[string]string // the environment CheckLogin reads
		want  string            // "" is run
		calls []string          // the k6 commands run, by their first argument
		run   string            // in the cloud run's arguments
	}{
		{"two cells", append(cellsOf("reused-h2", ""), cellsOf("fresh-h2", "")...), noDeps, "", loggedIn, "MODE=cloud runs one k6 test: give one SCENARIO", nil, ""},
		{"h3", cellsOf("reused-h3", ""), noDeps, "", loggedIn, "reused-h3 over HTTP/3 runs on our k6/x/proxybench/http3", nil, ""},
		{"h3 probe", cellsOf("json", "h3"), noDeps, "", loggedIn, "json over HTTP/3", nil, ""},
		{"h1 over TLS", cellsOf("fresh-h1", ""), noDeps, "", loggedIn, "fresh-h1 is HTTP/1.1 over TLS, which k6 measures only with GODEBUG=http2client=0", nil, ""},
		{"a probe over every protocol", cellsOf("json", ""), noDeps, "", loggedIn, "give json one PROTO (h1c or h2)", nil, ""},
		{"our extension", cellsOf("stream", "h2"), `{"buildDependencies":{"k6/x/proxybench/sse":"*","k6/x/a":"*","k6":"*"}}`, "", loggedIn, "MODE=cloud: stream needs k6/x/a, k6/x/proxybench/sse, compiled into bin/k6 only", []string{"deps"}, ""},
		{"k6 deps not JSON", cellsOf("reused-h2", ""), "{", "", loggedIn, "k6 deps " + filepath.Join("scenarios", "reused-h2.js") + ":", []string{"deps"}, ""},
		{"not logged in", cellsOf("reused-h2", ""), noDeps, "", map[string]string{"HOME": t.TempDir()}, "not logged in to k6 cloud", []string{"deps"}, ""},
		{"run", cellsOf("reused-h2", ""), noDeps, "", loggedIn, "", []string{"deps", "cloud"}, "cloud run -e DURATION=30s -e PROFILE=smoke -e TARGET_URL=https://proxy.example:8443 -e TESTID=t1 --vus 2 " + filepath.Join("scenarios", "reused-h2.js")},
		{"a probe", cellsOf("json", "h2"), noDeps, "", loggedIn, "", []string{"deps", "cloud"}, "-e PROTO=h2 -e TARGET_URL="},
		{"k6 cloud run fails", cellsOf("reused-h2", ""), noDeps, "3", loggedIn, "k6 cloud run reused-h2.js: exit status 3", []string{"deps", "cloud"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "calls")
			var stdout bytes.Buffer
			err := RunRemote(context.Background(), Test{
				K6: K6{
					Path:    k6Path,
					Environ: []string{"FAKE_K6_LOG=" + log, "FAKE_K6_DEPS=" + tt.deps, "FAKE_K6_EXIT=" + tt.exit, "DURATION=30s", "TARGET=all"},
					Stdout:  &stdout, Stderr: &stdout,
				},
				ScenariosDir: "scenarios", Cells: tt.cells,
				TargetURL: "https://proxy.example:8443", TestID: "t1", Profile: "smoke",
				Extra: []string{"--vus", "2"}, Getenv: getenv(tt.login),
			})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("want run, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("want an error with %q, got %v", tt.want, err)
			}
			data, err := os.ReadFile(log)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			var calls []string
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if line == "" {
					continue
				}
				offline, args, _ := strings.Cut(line, " ")
				if offline != "true" {
					t.Errorf("k6 %s ran without K6_NO_USAGE_REPORT=true", args)
				}
				calls = append(calls, strings.Fields(args)[0])
				if strings.HasPrefix(args, "cloud ") && !strings.Contains(args, tt.run) {
					t.Errorf("k6 %s: want %q in its arguments", args, tt.run)
				}
			}
			if strings.Join(calls, " ") != strings.Join(tt.calls, " ") {
				t.Errorf("k6 ran %q, want %q", calls, tt.calls)
			}
			if ran := strings.Contains(stdout.String(), "cloud run output"); ran != slices.Contains(tt.calls, "cloud") {
				t.Errorf("k6 cloud run's output on Stdout: %v, want %v", ran, !ran)
			}
		})
	}
}
