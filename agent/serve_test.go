package agent

import (
	"strings"
	"testing"
)

func TestListenTakesOneAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		listen string
		says   string // "": binds
	}{
		{"127.0.0.1:0", ""},
		{"0.0.0.0:0", "binds every interface"},
		{"[::]:0", "binds every interface"},
		{"localhost:0", "not an IP address"},
		{"127.0.0.1", "want ip:port"},
	}
	for _, tt := range tests {
		t.Run(tt.listen, func(t *testing.T) {
			t.Parallel()
			ln, err := Listen(tt.listen)
			if ln != nil {
				ln.Close()
			}
			if tt.says == "" && err != nil || tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)) {
				t.Errorf("Listen(%q): %v; want %q", tt.listen, err, tt.says)
			}
		})
	}
}

// STACK_LISTEN is the stack host's address for `make up` and `make agent` alike: the agent
// takes DefaultPort unless a port is given.
func TestAddressDefaultsThePort(t *testing.T) {
	t.Parallel()
	for listen, want := range map[string]string{
		"192.0.2.10":      "192.0.2.10:7443",
		"192.0.2.10:9443": "192.0.2.10:9443",
		"::1":             "[::1]:7443",
		"localhost":       "localhost", // Listen refuses it, saying why
	} {
		if got := Address(listen); got != want {
			t.Errorf("Address(%q) = %q, want %q", listen, got, want)
		}
	}
}
