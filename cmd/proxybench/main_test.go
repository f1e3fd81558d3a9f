package main

import (
	"path/filepath"
	"testing"
)

func TestEnvOrKeepsValuesAndEnvPathMakesPathsAbsolute(t *testing.T) {
	tests := []struct {
		key, val, def string
		path          bool
		want          string
	}{
		{"PB_TEST_TARGET", "nginx", "all", false, "nginx"},
		{"PB_TEST_TARGET", "", "all", false, "all"},
		{"PB_TEST_RUN", "run2", "", true, mustAbs(t, "run2")},
		{"PB_TEST_RUN", "/tmp/x", "", true, "/tmp/x"},
		{"PB_TEST_RUN", "", "", true, ""},
	}
	for _, tc := range tests {
		t.Setenv(tc.key, tc.val)
		get := envOr
		if tc.path {
			get = envPath
		}
		if got := get(tc.key, tc.def); got != tc.want {
			t.Errorf("%s=%q (path %v): got %q, want %q", tc.key, tc.val, tc.path, got, tc.want)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
