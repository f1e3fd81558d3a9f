package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCatalogue: the embedded catalogue parses, names a script for each entry, and lists every
// script of this folder; each script loads its config under its own name.
func TestCatalogue(t *testing.T) {
	t.Parallel()
	if _, err := parse(catalogueJSON); err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob("*.js")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`Config\(\{ scenario: '([^']+)'|Scenario\(\{ scenario: '([^']+)'`)
	for _, f := range scripts {
		name := strings.TrimSuffix(f, ".js")
		if _, ok := Lookup(name); !ok {
			t.Errorf("%s is not in catalogue.json", f)
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := named.FindSubmatch(src)
		if m == nil || string(m[1])+string(m[2]) != name {
			t.Errorf("%s does not load its config as scenario %q", f, name)
		}
	}
	for _, s := range All() {
		if !slices.Contains(scripts, s.Name+".js") {
			t.Errorf("catalogue.json lists %s, but there is no %s.js", s.Name, s.Name)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, json, want string }{
		{"not json", `{`, "unexpected end"},
		{"no name", `{"scenarios":[{"mode":"probe","route":"/","protos":["h2"]}]}`, "no scenario name"},
		{"twice", `{"scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h2"]},{"scenario":"a","mode":"probe","route":"/","protos":["h2"]}]}`, "a is listed twice"},
		{"mode", `{"scenarios":[{"scenario":"a","mode":"closed","route":"/","protos":["h2"]}]}`, `unknown mode "closed"`},
		{"route", `{"scenarios":[{"scenario":"a","mode":"probe","protos":["h2"]}]}`, "no route"},
		{"no protos", `{"scenarios":[{"scenario":"a","mode":"probe","route":"/"}]}`, "no protocols"},
		{"two for throughput", `{"scenarios":[{"scenario":"a","mode":"reused","route":"/","protos":["h1","h2"]}]}`, "runs over one protocol"},
		{"protocol", `{"scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h4"]}]}`, `unknown protocol "h4"`},
		{"default", `{"scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h1"],"default_proto":"h9"}]}`, `unknown protocol "h9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parse([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "scenarios/catalogue.json: ") {
				t.Errorf("parse(%s) = %v, want an error with %q", tc.json, err, tc.want)
			}
		})
	}
}
