package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCloudLogin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved.json")
	if err := os.WriteFile(saved, []byte(`{"collectors":{"cloud":{"token":"tok","stackID":42}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenOnly := filepath.Join(dir, "token-only.json")
	if err := os.WriteFile(tokenOnly, []byte(`{"collectors":{"cloud":{"token":"tok"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte(`{"collectors":`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want string // "" is logged in
	}{
		{"nothing anywhere", map[string]string{"HOME": dir}, "no token (K6_CLOUD_TOKEN) and no stack (K6_CLOUD_STACK_ID) in the environment or in " + filepath.Join(dir, ".config", "k6", "config.json")},
		{"environment", map[string]string{"HOME": dir, "K6_CLOUD_TOKEN": "t", "K6_CLOUD_STACK_ID": "7"}, ""},
		{"token without stack", map[string]string{"HOME": dir, "K6_CLOUD_TOKEN": "t"}, "no stack (K6_CLOUD_STACK_ID)"},
		{"stack not a number", map[string]string{"HOME": dir, "K6_CLOUD_TOKEN": "t", "K6_CLOUD_STACK_ID": "mystack"}, `K6_CLOUD_STACK_ID="mystack"`},
		{"k6 cloud login's file", map[string]string{"K6_CONFIG": saved}, ""},
		{"XDG config home", map[string]string{"XDG_CONFIG_HOME": dir}, "in " + filepath.Join(dir, "k6", "config.json")},
		{"saved token, stack from env", map[string]string{"K6_CONFIG": tokenOnly, "K6_CLOUD_STACK_ID": "9"}, ""},
		{"saved token only", map[string]string{"K6_CONFIG": tokenOnly}, "no stack"},
		{"unreadable configuration", map[string]string{"K6_CONFIG": broken}, "is not k6's JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := cloudLogin(func(k string) string { return tt.env[k] })
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("want logged in, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("want an error with %q, got %v", tt.want, err)
			case tt.want != "" && strings.HasPrefix(tt.want, "no ") && !strings.Contains(err.Error(), "k6 cloud login"):
				t.Fatalf("the error does not say how to log in: %v", err)
			}
		})
	}
}

func TestCloudArgs(t *testing.T) {
	t.Parallel()
	environ := []string{
		"HOME=/root", "K6_CLOUD_TOKEN=secret", "TARGET=all", "DURATION=30s", "PWD=/work",
		"TARGETS_FILE=/work/t.json", "TESTID=old", "CONNECTIONS=64",
	}
	set := map[string]string{"TARGET_URL": "https://proxy.example:8443", "TESTID": "new", "PROTO": ""}
	got := strings.Join(cloudArgs(environ, set, []string{"--vus", "2"}, "s.js"), " ")
	want := "cloud run -e DURATION=30s -e CONNECTIONS=64 -e TARGET_URL=https://proxy.example:8443 -e TESTID=new --vus 2 s.js"
	if got != want {
		t.Fatalf("cloudArgs:\n got %s\nwant %s", got, want)
	}
}
