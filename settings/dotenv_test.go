package settings

import (
	"maps"
	"strings"
	"testing"
)

func TestDotEnv(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{"# a comment\n\nDURATION=30s\nPROFILE ?= stable\nexport TARGET := nginx\nARGS = --http-debug \n", map[string]string{"DURATION": "30s", "PROFILE": "stable", "TARGET": "nginx", "ARGS": "--http-debug"}, ""},
		{"PIN=\n", map[string]string{"PIN": ""}, ""},
		{"DURATION=30s\nthis is not a setting\n", nil, `.env:2: "this is not a setting" is not NAME=value`},
		{"1X=3\n", nil, ".env:1:"},
	}
	for _, tc := range tests {
		got, err := DotEnv(strings.NewReader(tc.in), ".env")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
