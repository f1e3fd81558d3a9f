package runner

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every variable a script reads is in ScriptEnv: a k6 cloud run shows scripts nothing else.
func TestScriptEnvIsComplete(t *testing.T) {
	t.Parallel()
	read := regexp.MustCompile(`__ENV\.([A-Z0-9_]+)|\benv\('([A-Z0-9_]+)'`)
	var files []string
	for _, p := range []string{"*.js", "lib/*.js", "native/*.js"} {
		m, _ := filepath.Glob(filepath.Join("..", "scenarios", p))
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d scripts under ../scenarios", len(files))
	}
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// a computed name (__ENV[name]) would escape the list: config.js's env() is the one
		if strings.Contains(string(data), "__ENV[") && filepath.Base(f) != "config.js" {
			t.Errorf("%s reads __ENV[…] by a computed name: read each variable by its name", f)
		}
		for _, m := range read.FindAllStringSubmatch(string(data), -1) {
			name := m[1] + m[2]
			seen++
			if !slices.Contains(ScriptEnv, name) {
				t.Errorf("%s reads %s, which ScriptEnv leaves out", f, name)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no script reads any variable: the pattern is out of date")
	}
}

func TestScriptFlags(t *testing.T) {
	t.Parallel()
	got := ScriptFlags([]string{"HOME=/root", "K6_CLOUD_TOKEN=secret", "TARGET=nginx", "DURATION=", "TESTID=x=y"})
	want := []string{"-e", "TARGET=nginx", "-e", "TESTID=x=y"}
	if !slices.Equal(got, want) {
		t.Fatalf("ScriptFlags = %v, want %v", got, want)
	}
	if strings.Contains(strings.Join(got, " "), "secret") {
		t.Fatal("a secret of the environment became a flag")
	}
}
