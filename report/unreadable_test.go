package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
)

// A results folder without bench.json: a truncated result file or one of another schema is
// left out and listed (Unreadable), every other run still counted; a *.json that is plainly
// not a result is skipped in silence, as before.
func TestFromResultsListsUnreadableFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeResult(t, dir, "reused-h1-direct.json", reusedDoc("direct", 10000, 1))
	writeResult(t, dir, "reused-h1-nginx.json", reusedDoc("nginx", 8000, 2))
	// k6 stopped while writing: the file ends mid-object.
	data, err := os.ReadFile(filepath.Join(dir, "reused-h1-nginx.json"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "reused-h1-nginx.run2.json")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	other := reusedDoc("caddy", 7000, 2)
	other["schema"] = result.Schema + 1
	writeResult(t, dir, "reused-h1-caddy.json", other)
	noScenario := reusedDoc("envoy", 7000, 2)
	delete(noScenario, "scenario")
	writeResult(t, dir, "reused-h1-envoy.json", noScenario)
	notJSON := filepath.Join(dir, "fresh-h2-nginx.json")
	if err := os.WriteFile(notJSON, []byte("k6: panic\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Not results, and said to be none: k6's --summary-export, a note, a bare array, and
	// whatever test-artifacts/ holds.
	if err := os.WriteFile(filepath.Join(dir, "summary-export.json"), []byte(`{"metrics": {"http_reqs": {"count": 5}}, "root_group": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "list.json"), []byte(`[1, 2]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "test-artifacts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test-artifacts", "broken.json"), []byte(`{"schema": 1,`), 0o644); err != nil {
		t.Fatal(err)
	}

	b, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := b.find("reused-h1", "nginx", "h1"); n == nil || len(n.Runs) != 1 || !n.Valid || b.find("reused-h1", "direct", "h1") == nil {
		t.Errorf("the readable runs: nginx %+v", n)
	}
	want := map[string]string{
		"fresh-h2-nginx.json":       notJSON + ":1:1: invalid character 'k' looking for beginning of value",
		"reused-h1-caddy.json":      filepath.Join(dir, "reused-h1-caddy.json") + fmt.Sprintf(": result schema %d, this proxybench reads schema %d: written by another version of proxybench", result.Schema+1, result.Schema),
		"reused-h1-envoy.json":      filepath.Join(dir, "reused-h1-envoy.json") + ": no scenario: not a result file of proxybench",
		"reused-h1-nginx.run2.json": truncated + ":",
	}
	if len(b.Unreadable) != len(want) {
		t.Errorf("unreadable = %+v, want %d files", b.Unreadable, len(want))
	}
	for _, u := range b.Unreadable {
		w, ok := want[u.File]
		if !ok || !strings.HasPrefix(u.Error, w) {
			t.Errorf("unreadable %s: %q, want it to start with %q", u.File, u.Error, w)
		}
		if u.File == "reused-h1-nginx.run2.json" && !strings.HasSuffix(u.Error, "unexpected end of JSON input (the file is truncated or a bracket is missing)") {
			t.Errorf("truncated file: %q", u.Error)
		}
	}

	// the report itself says what it left out, under "Invalid cells"
	var md bytes.Buffer
	if err := Markdown(&md, b); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(md.String(), "unreadable result file, left out:"); got != len(want) {
		t.Errorf("report.md lists %d unreadable files, want %d:\n%s", got, len(want), md.String())
	}

	var warn bytes.Buffer
	WarnUnreadable(&warn, "report", "results/x", b, "run `make report ID=x` again")
	for _, w := range []string{
		"report: warning: 4 result file(s) of results/x could not be read; every other run is counted", "  " + truncated + ":",
		"run those cells again, or move the files out of results/x, then run `make report ID=x` again",
	} {
		if !strings.Contains(warn.String(), w) {
			t.Errorf("warning lacks %q:\n%s", w, warn.String())
		}
	}
	warn.Reset()
	WarnUnreadable(&warn, "report", "results/x", &Bench{}, "")
	if warn.Len() != 0 {
		t.Errorf("a bench without unreadable files warns: %q", warn.String())
	}

	// compare says, under its table, that a side misses runs.
	var out bytes.Buffer
	if err := PrintCompare(&out, b, b, Compare(b, b)); err != nil {
		t.Fatal(err)
	}
	if w := "note: B (" + b.TestID + ") leaves out 4 result file(s) it could not read, so their runs are missing above: fresh-h2-nginx.json, reused-h1-caddy.json"; !strings.Contains(out.String(), w) {
		t.Errorf("compare output lacks %q:\n%s", w, out.String())
	}
}

// Nothing readable: an error that lists every unreadable file, not "no result files".
func TestFromResultsOnlyUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "reused-h1-nginx.json")
	if err := os.WriteFile(p, []byte(`{"schema": 1, "scenario": "reused-h1", "target": "ng`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Build(dir)
	if want := "no bench.json and no readable result file in " + dir + ":\n  " + p + ":1:52: unexpected end of JSON input"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Build error = %v, want %q", err, want)
	}
}

// A truncated bench.json is an error naming it and the place, with what to do: not a report
// silently rebuilt without the resources and manifest that only it holds.
func TestLoadTruncatedBench(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeResult(t, dir, "reused-h1-direct.json", reusedDoc("direct", 10000, 1))
	p := filepath.Join(dir, BenchFile)
	if err := os.WriteFile(p, []byte("{\n  \"schema\": 1,\n  \"testid\": \"x\",\n  \"cells\": [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Build(dir)
	if err == nil || !strings.HasPrefix(err.Error(), p+":4:13: unexpected end of JSON input") || !strings.Contains(err.Error(), "move it out of "+dir+" to rebuild the report from the per-run result files") {
		t.Errorf("Build error = %v", err)
	}
}
