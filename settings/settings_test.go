package settings

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestTableIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range table {
		if seen[s.Name] {
			t.Errorf("%s: described twice", s.Name)
		}
		seen[s.Name] = true
		switch {
		case s.Help == "" || len(s.Commands) == 0:
			t.Errorf("%s: want what it does and the make targets that take it", s.Name)
		case (s.Kind == Choice || s.Kind == List) != (len(s.Values) > 0):
			t.Errorf("%s: a %s setting, values %v: only choices and lists have values", s.Name, s.Kind, s.Values)
		case s.Profile != "" && strings.Contains(s.ProfileDefault(), "<nil>"):
			t.Errorf("%s: the profiles have no field %q: %s", s.Name, s.Profile, s.ProfileDefault())
		case s.Knob && !s.Script:
			t.Errorf("%s: a knob the scripts do not read", s.Name)
		}
	}
}

func TestProfileDefault(t *testing.T) {
	tests := []struct{ name, want string }{
		{"DURATION", "smoke 10s, stable 30s, stress 30s"},
		{"RUNS", "smoke 1, stable 5, stress 3"},
		{"UPLOAD_BYTES", "262144"},
		{"SCENARIO", ""},
	}
	for _, tc := range tests {
		s, ok := Lookup(tc.name)
		if got := s.ProfileDefault(); !ok || got != tc.want {
			t.Errorf("%s: default %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCheckKnobs(t *testing.T) {
	tests := []struct {
		env     map[string]string
		wantErr []string // parts of the error, one per bad knob
	}{
		{map[string]string{}, nil},
		{map[string]string{"DURATION": "1m30s", "WARMUP": "0", "REQUESTS": "9007199254740991"}, nil},
		{map[string]string{"DURATION": "0s"}, []string{`DURATION="0s": want a duration longer than zero`}},
		{map[string]string{"WARMUP": "3"}, []string{`WARMUP="3"`, "or 0 for none"}},
		{map[string]string{"CONNECTIONS": "0", "STREAMS": "1.5", "SAMPLES": "9007199254740992"}, []string{`CONNECTIONS="0"`, `STREAMS="1.5"`, `SAMPLES="9007199254740992"`}},
		{map[string]string{"RUNS": "x", "SEGMENTS": "x"}, nil}, // not knobs: their commands check them
	}
	for _, tc := range tests {
		err := CheckKnobs(func(k string) string { return tc.env[k] })
		if (err != nil) != (len(tc.wantErr) > 0) {
			t.Errorf("%v: error %v, want one with %q", tc.env, err, tc.wantErr)
			continue
		}
		for _, w := range tc.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %v, want %q in it", tc.env, err, w)
			}
		}
	}
}

func TestOn(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "Yes": true, " true ": true, "": false, "0": false, "no": false} {
		if got, err := On("X", v); err != nil || got != want {
			t.Errorf("On(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := On("DASHBOARD", "ye"); err == nil || !strings.Contains(err.Error(), `DASHBOARD="ye": a switch is 1, true or yes`) {
		t.Errorf("On(ye) = %v, want an error naming the switch", err)
	}
}

// The scripts check the knobs themselves (scenarios/lib/config.js); CheckKnobs checks them the
// same way first, so that a bad one stops a bench before it starts.
func TestKnobRulesMatchTheScripts(t *testing.T) {
	data, err := os.ReadFile("../scenarios/lib/config.js")
	if err != nil {
		t.Fatal(err)
	}
	js := string(data)
	for _, want := range []string{
		"const DURATION_RE = /" + DurationRE.String() + "/;",
		"/" + ZeroRE.String() + "/.test(v)",
		"if (!/" + CountRE.String() + "/.test(v)",
	} {
		if !strings.Contains(js, want) {
			t.Errorf("config.js has no %s: the rules here and there must be the same", want)
		}
	}
	var got []string
	for _, m := range regexp.MustCompile(`positiveInt\(\s*'([A-Z_]+)'`).FindAllStringSubmatch(js, -1) {
		got = append(got, m[1])
	}
	if want := Knobs(Count); !slices.Equal(got, want) {
		t.Errorf("config.js reads the counts %v, the count knobs are %v", got, want)
	}
	for _, k := range Knobs(Duration) {
		s, _ := Lookup(k)
		want := "seconds('" + k + "'"
		if s.ZeroOK {
			want = "allowZero: true"
		}
		if !strings.Contains(js, "seconds('"+k+"'") || !strings.Contains(js, want) {
			t.Errorf("config.js does not read %s as a duration (zero allowed: %v)", k, s.ZeroOK)
		}
	}
}

// makeInternals are the Makefile's own variables, not a user's settings: the tools it runs.
var makeInternals = []string{"GO", "COMPOSE", "LINT_TOOLS", "SHELL"}

// Every variable the Makefile takes is a setting, and every command a setting names passes it
// on: in its recipe (or a *_FLAGS it expands), or by an export that every recipe inherits.
func TestMakefileTakesEverySetting(t *testing.T) {
	data, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mk := string(data)
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^export ([A-Z0-9_ ]+?)\s*(\?=.*|:=.*)?$`).FindAllStringSubmatch(mk, -1) {
		for _, n := range strings.Fields(m[1]) {
			exported[n] = true
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^(?:export )?([A-Z][A-Z0-9_]*) \?=`).FindAllStringSubmatch(mk, -1) {
		if _, ok := Lookup(m[1]); !ok && !slices.Contains(makeInternals, m[1]) {
			t.Errorf("Makefile: %s ?= … is no setting: describe it in settings/table.go", m[1])
		}
	}
	for n := range exported {
		if _, ok := Lookup(n); !ok && !strings.HasPrefix(n, "K6_") {
			t.Errorf("Makefile: export %s is no setting: describe it in settings/table.go", n)
		}
	}
	// a recipe: the target's line and its indented lines, with the variables it expands
	// (BENCH_FLAGS, WITH_OBSERVE)
	flags := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_]+) = (.*)$`).FindAllStringSubmatch(mk, -1) {
		flags[m[1]] = m[2]
	}
	recipe := func(target string) (string, bool) {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:.*\n((?:\t.*\n)*)`).FindStringSubmatch(mk)
		if m == nil {
			return "", false
		}
		r := m[0]
		for n, v := range flags {
			r = strings.ReplaceAll(r, "$("+n+")", v)
		}
		return r, true
	}
	for _, s := range table {
		for _, c := range s.Commands {
			r, ok := recipe(c)
			if !ok {
				t.Errorf("%s: make target %s does not exist", s.Name, c)
				continue
			}
			if !exported[s.Name] && !strings.Contains(r, "$("+s.Name+")") && !strings.Contains(r, ","+s.Name+")") {
				t.Errorf("%s: make %s neither passes $(%s) nor exports it", s.Name, c, s.Name)
			}
		}
	}
}
