package cloud

import (
	"strings"
	"testing"
)

func TestSettingsCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    Settings
		want string // "" is accepted
	}{
		{"local", Settings{Mode: Local}, ""},
		{"local, one segment", Settings{Mode: Local, Segments: " 1 "}, ""},
		{"cloud", Settings{Mode: Remote, TargetURL: "https://proxy.example:8443"}, ""},
		{"split", Settings{Mode: Local, Segments: "2"}, "SEGMENTS=2: make k6-cloud runs one k6"},
		{"split before mode", Settings{Mode: "aws", Segments: "3"}, "SEGMENTS=3:"},
		{"local with target url", Settings{Mode: Local, TargetURL: "https://x"}, "TARGET_URL is for MODE=cloud"},
		{"cloud without target url", Settings{Mode: Remote}, "MODE=cloud needs TARGET_URL"},
		{"unknown mode", Settings{Mode: "aws"}, `MODE="aws": want local (run here with bin/k6, stream to k6 cloud) or cloud (Grafana's load generators, against TARGET_URL)`},
		{"no mode", Settings{}, `MODE="": want local`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.s.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("%+v: want accepted, got %v", tc.s, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("%+v: want an error with %q, got %v", tc.s, tc.want, err)
			}
		})
	}
}
