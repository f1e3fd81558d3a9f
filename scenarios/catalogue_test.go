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

func TestProfiles(t *testing.T) {
	t.Parallel()
	if got := strings.Join(ProfileNames(), ","); got != "smoke,stable,stress" {
		t.Errorf("ProfileNames() = %s", got)
	}
	if p, err := ProfileNamed(DefaultProfile()); err != nil || p.Runs != 1 || p.Connections != 32 {
		t.Errorf("the default profile = %+v, %v", p, err)
	}
	if _, err := ProfileNamed("soak"); err == nil || err.Error() != `unknown PROFILE "soak": valid profiles are smoke, stable, stress` {
		t.Errorf("ProfileNamed(soak) = %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, json, want string }{
		{"not json", `{`, "unexpected end"},
		{"no name", `{"default_proto":"h2","scenarios":[{"mode":"probe","route":"/","protos":["h2"]}]}`, "no scenario name"},
		{"twice", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h2"]},{"scenario":"a","mode":"probe","route":"/","protos":["h2"]}]}`, "a is listed twice"},
		{"mode", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"closed","route":"/","protos":["h2"]}]}`, `unknown mode "closed"`},
		{"route", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","protos":["h2"]}]}`, "no route"},
		{"no protos", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/"}]}`, "no protocols"},
		{"two for throughput", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"reused","route":"/","protos":["h1","h2"]}]}`, "runs over one protocol"},
		{"protocol", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h4"]}]}`, `unknown protocol "h4"`},
		{"default", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h1","h1c"],"default_proto":"h9"}]}`, "not over its default protocol h9"},
		{"no h2 for the default", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h1","h1c"]}]}`, "not over its default protocol h2"},
		{"two equal-loads", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"equal-load","route":"/","protos":["h2"]},{"scenario":"b","mode":"equal-load","route":"/","protos":["h2"]}]}`, "2 equal-load scenarios"},
		{"figure off a probe", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"reused","route":"/","protos":["h2"],"figure":{"says":"x"}}]}`, "a reused scenario has none"},
		{"figure says nothing", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h2"],"figure":{"trend":"t"}}]}`, "says is empty"},
		{"gap without a trend", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h2"],"gap":{"says":"x"}}]}`, "both trend and says"},
		{"details without columns", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h2"],"details":{"title":"A"}}]}`, "at least one column"},
		{"a column without a trend", `{"default_proto":"h2","scenarios":[{"scenario":"a","mode":"probe","route":"/","protos":["h2"],"details":{"title":"A","columns":[{"label":"x"}]}}]}`, "a label and a trend"},
		{"catalogue's default", `{"default_proto":"h4","scenarios":[]}`, `default_proto "h4" is not a protocol`},
		{"profile field", `{"default_proto":"h2","default_profile":"p","profiles":{"p":{"duration":"1s","warmup":"0s","connections":1,"streams":1,"requests":1,"fresh_connections":1,"samples":1}}}`, "profile p: every field"},
		{"default profile", `{"default_proto":"h2","default_profile":"q","profiles":{"p":{"duration":"1s","warmup":"0s","connections":1,"streams":1,"requests":1,"fresh_connections":1,"fresh_duration":"1s","samples":1,"runs":1,"capacity_protos":"h1c"}}}`, `default_profile "q" is not a profile`},
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
