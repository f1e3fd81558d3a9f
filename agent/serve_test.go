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
