package main

import (
	"context"
	"strings"
	"testing"
)

// make k6-cloud's variables reach package cloud's checks from the environment as from the
// flags (a flag over its variable), and each refusal comes before k6 or the stack is touched.
func TestK6CloudTakesTheEnvironment(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"mode", nil, map[string]string{"SCENARIO": "reused-h2", "MODE": "cloud"}, "MODE=cloud needs TARGET_URL"},
		{"a flag over its variable", []string{"-mode", "cloud"}, map[string]string{"SCENARIO": "reused-h2", "MODE": "aws"}, "MODE=cloud needs TARGET_URL"},
		{"target url", nil, map[string]string{"SCENARIO": "reused-h2", "TARGET_URL": "https://x"}, "TARGET_URL is for MODE=cloud"},
		{"segments", nil, map[string]string{"SCENARIO": "reused-h2", "SEGMENTS": " 2 "}, "SEGMENTS=2: make k6-cloud runs one k6"},
		{"scenario before mode", nil, map[string]string{"SCENARIO": "nope", "MODE": "aws"}, `unknown SCENARIO "nope"`},
		{"portable before login", nil, map[string]string{"SCENARIO": "reused-h3", "MODE": "cloud", "TARGET_URL": "https://x", "HOME": t.TempDir()}, "reused-h3 over HTTP/3"},
		{"probe over every protocol", []string{"-scenario", "json", "-mode", "cloud", "-target-url", "https://x"}, nil, "give json one PROTO (h1c or h2)"},
		{"login before the stack", nil, map[string]string{"SCENARIO": "reused-h1c", "HOME": t.TempDir()}, "not logged in to k6 cloud"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			badInputEnv(t)
			for _, k := range []string{"K6_CLOUD_TOKEN", "K6_CLOUD_STACK_ID", "K6_CONFIG", "XDG_CONFIG_HOME"} {
				t.Setenv(k, "")
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			err := cmdK6Cloud(context.Background(), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("proxybench k6-cloud %q with %v: error %v\nwant one containing %q", tt.args, tt.env, err, tt.want)
			}
		})
	}
}
