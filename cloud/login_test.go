package cloud

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// getenv is an environment of the given variables only, so that nothing of the user's reaches a test.
func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestCheckLogin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	saved := write("saved.json", `{"collectors":{"cloud":{"token":"tok","stackID":42}}}`)
	tokenOnly := write("token-only.json", `{"collectors":{"cloud":{"token":"tok"}}}`)
	broken := write("broken.json", `{"collectors":`)
	tests := []struct {
		name string
		env  map[string]string
		want string // "" is logged in
	}{
		{"nothing anywhere", map[string]string{"HOME": dir}, "no token (K6_CLOUD_TOKEN) and no stack (K6_CLOUD_STACK_ID) in the environment or in " + filepath.Join(dir, ".config", "k6", "config.json")},
		{"environment", map[string]string{"HOME": dir, "K6_CLOUD_TOKEN": "t", "K6_CLOUD_STACK_ID": "7"}, ""},
		{"token without stack", map[string]string{"HOME": dir, "K6_CLOUD_TOKEN": "t"}, "no stack (K6_CLOUD_STACK_ID)"},
		{"stack not a number", map[string]string{"HOME": dir, "K6_CLOUD_TOKEN": "t", "K6_CLOUD_STACK_ID": "mystack"}, `K6_CLOUD_STACK_ID="mystack"`},
		{"stack from a saved login", map[string]string{"K6_CONFIG": saved, "K6_CLOUD_TOKEN": "t"}, ""},
		{"k6 cloud login's file", map[string]string{"K6_CONFIG": saved}, ""},
		{"XDG config home", map[string]string{"XDG_CONFIG_HOME": dir}, "in " + filepath.Join(dir, "k6", "config.json")},
		{"saved token, stack from env", map[string]string{"K6_CONFIG": tokenOnly, "K6_CLOUD_STACK_ID": "9"}, ""},
		{"saved token only", map[string]string{"K6_CONFIG": tokenOnly}, "no stack"},
		{"unreadable configuration", map[string]string{"K6_CONFIG": broken}, "is not k6's JSON"},
		{"configuration is a folder", map[string]string{"K6_CONFIG": dir}, "k6's configuration " + dir + ":"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckLogin(getenv(tt.env))
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
