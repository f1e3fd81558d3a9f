package k8s

import (
	"testing"

	"github.com/proxybench/proxybench/scenarios"
)

// validSettings are what `make k8s` is given in the tests, each row changing only what it tests.
func validSettings() Settings {
	return Settings{
		Scenario: "reused-h2", Parallelism: 2, Image: "registry.example/proxybench-k6:v1",
		TargetURL: "https://proxy.example:8443", TestID: "k8s-test", Profile: scenarios.DefaultProfile(),
	}
}

// getenv is an environment of the given variables only, so that nothing of the user's reaches a test.
func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// The runners get what the scripts read and the user set, and what a runner needs; never a
// path of this machine.
func TestRunnerEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings func(s *Settings)
		env      map[string]string
		want     map[string]string // "" is absent
	}{
		{
			"split",
			func(s *Settings) { s.Parallelism = 3 },
			map[string]string{"TARGETS_FILE": "/here/targets.json", "PWD": "/here", "SUMMARY_JSON": "/here/r.json", "STREAMS": "8"},
			map[string]string{"SEGMENTS": "3", "TARGETS_FILE": "", "PWD": "", "SUMMARY_JSON": podSummary, "STREAMS": "8", "GODEBUG": ""},
		},
		{"one runner", func(s *Settings) { s.Parallelism = 1 }, nil, map[string]string{"SEGMENTS": ""}},
		{"h1 over TLS", func(s *Settings) { s.Scenario = "fresh-h1" }, map[string]string{"GODEBUG": "tlsmlkem=0"}, map[string]string{"GODEBUG": "tlsmlkem=0,http2client=0"}},
		{"a probe over h1", func(s *Settings) { s.Scenario, s.Proto, s.Parallelism = "json", "h1", 1 }, nil, map[string]string{"GODEBUG": "http2client=0", "PROTO": "h1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSettings()
			tc.settings(&s)
			got := map[string]string{}
			for _, e := range s.RunnerEnv(getenv(tc.env)) {
				got[e.Name] = e.Value
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("runner env %s=%q, want %q (env %v)", k, got[k], v, got)
				}
			}
		})
	}
}
