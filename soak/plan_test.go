package soak

import (
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/settings"
)

func TestParseMinutes(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string // a part of the error; "" for none
	}{
		{"10", 10, ""},
		{" 0.5 ", 0.5, ""},
		{".5", 0.5, ""},
		{"10.", 10, ""},
		{"120", 120, ""},
		{"0", 0, `MINUTES="0": want a number of minutes above 0 and at most 120`},
		{"-1", 0, `MINUTES="-1"`},
		{"120.5", 0, `MINUTES="120.5"`},
		{"1e1", 0, `MINUTES="1e1"`},
		{"NaN", 0, `MINUTES="NaN"`},
		{"Inf", 0, `MINUTES="Inf"`},
		{"", 0, `MINUTES=""`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMinutes(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseInterval(t *testing.T) {
	tests := []struct {
		interval, minutes string
		want              time.Duration
		wantErr           string // a part of the error; "" for none
	}{
		{"10s", "10", 10 * time.Second, ""},
		{" 2s ", "0.5", 2 * time.Second, ""},
		{"3s", ".5", 3 * time.Second, ""},
		{"10m", "120", 10 * time.Minute, ""},
		{"soon", "10", 0, `SOAK_INTERVAL="soon": want a duration from 1s to 10m0s such as 10s or 2s`},
		{"10ms", "10", 0, `SOAK_INTERVAL="10ms"`},
		{"11m", "120", 0, `SOAK_INTERVAL="11m"`},
		// the minutes as they were written, not as they were read
		{"10s", ".5", 0, "SOAK_INTERVAL=10s is too long for .5 minutes: at most 3s, so that the first and the last 20% of the run (6s each) hold 2 samples each"},
		{"1m", "2", 0, "SOAK_INTERVAL=1m0s is too long for 2 minutes: at most 12s"},
	}
	for _, tc := range tests {
		t.Run(tc.interval+"/"+tc.minutes, func(t *testing.T) {
			got, err := ParseInterval(tc.interval, tc.minutes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// DURATION is the minutes as k6 reads them, and as the result file gives them back.
func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		minutes float64
		want    string
	}{{10, "10m"}, {0.5, "0.5m"}, {1.25, "1.25m"}, {120, "120m"}} {
		if got := Duration(tc.minutes); got != tc.want || settings.Seconds(got) != tc.minutes*60 {
			t.Errorf("Duration(%v) = %q (%v s), want %q (%v s)", tc.minutes, got, settings.Seconds(got), tc.want, tc.minutes*60)
		}
	}
}
