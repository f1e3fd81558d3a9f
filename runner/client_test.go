package runner

import (
	"path/filepath"
	"testing"
)

// The native scripts run unless CLIENT=k6, but for a fresh run split over k6 instances.
func TestScript(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		client, scenario string
		segments         int
		want             string
	}{
		{ClientNative, "reused-h1c", 0, "native/reused-h1c.js"},
		{ClientNative, "fresh-h2", 0, "native/fresh-h2.js"},
		{ClientNative, "equal-load", 0, "native/equal-load.js"},
		{ClientNative, "fresh-h3", 0, "fresh-h3.js"},
		{ClientNative, "fresh-h1c", 2, "fresh-h1c.js"},
		{ClientNative, "reused-h1c", 2, "native/reused-h1c.js"},
		{ClientK6, "fresh-h1c", 0, "fresh-h1c.js"},
		{ClientK6, "equal-load", 0, "equal-load.js"},
	}
	for _, tt := range tests {
		r := &Runner{ScenariosDir: dir, Client: tt.client, Segments: tt.segments}
		got, err := r.Script(tt.scenario)
		if err != nil {
			t.Errorf("%s %s ×%d: %v", tt.client, tt.scenario, tt.segments, err)
			continue
		}
		if want := filepath.Join(dir, tt.want); got != want {
			t.Errorf("%s %s ×%d: %s, want %s", tt.client, tt.scenario, tt.segments, got, want)
		}
	}
	if _, err := (&Runner{ScenariosDir: dir}).Script("nope"); err == nil {
		t.Error("an unknown scenario has a script")
	}
}
