package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
)

// The measured window is placed from the end of the k6 run back: exit is when it ended, in
// the samples' time, and the scenario began after the warm-up and its gap.
func TestMeasuredWindow(t *testing.T) {
	tests := []struct {
		name    string
		result  string // the k6 result file; "" for none
		exit    float64
		want    Window
		wantErr string // a part of the error; "" for none
	}{
		{
			"after the warm-up and its gap",
			`{"config": {"duration": "0.5m", "warmup": "10s"}, "k6": {"state": {"testRunDurationMs": 44000}}}`,
			50,
			Window{From: 17, To: 47},
			"",
		},
		{
			"no warm-up, no gap",
			`{"config": {"duration": "1m30s", "warmup": "0"}, "k6": {"state": {"testRunDurationMs": 92000}}}`,
			100,
			Window{From: 8, To: 98},
			"",
		},
		{"no duration", `{"config": {"warmup": "10s"}, "k6": {"state": {"testRunDurationMs": 44000}}}`, 50, Window{}, "no duration or test run duration"},
		{"no test run duration", `{"config": {"duration": "30s", "warmup": "10s"}}`, 50, Window{}, "no duration or test run duration"},
		{"not JSON", `{"config":`, 50, Window{}, "unexpected end of JSON input"},
		{"no file", "", 50, Window{}, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reused-h1c-nginx.json")
			if tc.result != "" {
				// a result file of this proxybench's schema, with the parts the window reads
				body := strings.Replace(tc.result, "{", fmt.Sprintf(`{"schema": %d, "scenario": "reused-h1c", `, result.Schema), 1)
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			w, err := measuredWindow(path, tc.exit)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || w != tc.want {
				t.Fatalf("%+v, %v; want %+v", w, err, tc.want)
			}
		})
	}
}

func TestWindowParts(t *testing.T) {
	w := Window{From: 10, To: 110}
	if b, e := w.baseline(), w.end(); b != (Window{10, 30}) || e != (Window{90, 110}) {
		t.Errorf("baseline %+v, end %+v; want the first and the last %.0f%%", b, e, windowFraction*100)
	}
	for _, tc := range []struct {
		t    float64
		want bool
	}{{9.9, false}, {10, true}, {60, true}, {110, true}, {110.1, false}} {
		if got := w.holds(tc.t); got != tc.want {
			t.Errorf("holds(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}
