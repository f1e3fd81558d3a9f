package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/settings"
)

func TestParseSoakFlags(t *testing.T) {
	badInputEnv(t)
	for _, k := range []string{"MINUTES", "SOAK_INTERVAL", "RUN_TIMEOUT"} {
		t.Setenv(k, "")
	}
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		minutes  float64
		proto    string
		interval time.Duration
		wantErr  string // a part of the error; "" for none
	}{
		{"defaults", []string{"-target", "nginx"}, nil, 10, "h1c", 10 * time.Second, ""},
		{"target from env", nil, map[string]string{"TARGET": "caddy", "MINUTES": "2"}, 2, "h1c", 10 * time.Second, ""},
		{"direct", []string{"-target", "direct", "-proto", "h3"}, nil, 10, "h3", 10 * time.Second, ""},
		{"fraction", []string{"-target", "nginx", "-minutes", "0.5", "-interval", "2s"}, nil, 0.5, "h1c", 2 * time.Second, ""},
		{"interval from env", []string{"-target", "nginx", "-minutes", ".5"}, map[string]string{"SOAK_INTERVAL": "3s"}, 0.5, "h1c", 3 * time.Second, ""},
		{"stress stated", []string{"-target", "nginx", "-profile", "stress"}, nil, 10, "h1c", 10 * time.Second, ""},
		{"profile ignored from env", []string{"-target", "nginx"}, map[string]string{"PROFILE": "smoke"}, 10, "h1c", 10 * time.Second, ""},

		{"no target", nil, nil, 0, "", 0, `soak needs one target, got "": TARGET=NAME, a name of targets.json or direct`},
		{"all", []string{"-target", "all"}, nil, 0, "", 0, `soak needs one target, got "all"`},
		{"a list", []string{"-target", "nginx,caddy"}, nil, 0, "", 0, `soak runs against one target, got the list "nginx,caddy"`},
		{"-targets", []string{"-targets", "nginx"}, nil, 0, "", 0, "soak runs against one target: -target NAME"},
		{"zero minutes", []string{"-target", "nginx", "-minutes", "0"}, nil, 0, "", 0, `MINUTES="0": want a number of minutes above 0 and at most 120`},
		{"negative", []string{"-target", "nginx", "-minutes", "-1"}, nil, 0, "", 0, `MINUTES="-1"`},
		{"absurd", []string{"-target", "nginx", "-minutes", "100000"}, nil, 0, "", 0, `MINUTES="100000"`},
		{"not a number", []string{"-target", "nginx", "-minutes", "ten"}, nil, 0, "", 0, `MINUTES="ten"`},
		{"no exponents", []string{"-target", "nginx", "-minutes", "1e1"}, nil, 0, "", 0, `MINUTES="1e1"`},
		{"NaN", []string{"-target", "nginx", "-minutes", "NaN"}, nil, 0, "", 0, `MINUTES="NaN"`},
		{"Inf", []string{"-target", "nginx", "-minutes", "Inf"}, nil, 0, "", 0, `MINUTES="Inf"`},
		{"unknown proto", []string{"-target", "nginx", "-proto", "h4"}, nil, 0, "", 0, `unknown PROTO "h4": valid are h1, h1c, h2, h3`},
		{"another profile", []string{"-target", "nginx", "-profile", "smoke"}, nil, 0, "", 0, "soak runs the stress profile only"},
		{"bad interval", []string{"-target", "nginx", "-interval", "soon"}, nil, 0, "", 0, `SOAK_INTERVAL="soon": want a duration from 1s to 10m0s`},
		{"interval too short", []string{"-target", "nginx", "-interval", "10ms"}, nil, 0, "", 0, `SOAK_INTERVAL="10ms"`},
		{"interval too long for the run", []string{"-target", "nginx", "-minutes", "0.5"}, nil, 0, "", 0, "SOAK_INTERVAL=10s is too long for 0.5 minutes: at most 3s"},
		{"bad testid", []string{"-target", "nginx", "-testid", "../x"}, nil, 0, "", 0, `TESTID "../x"`},
		{"unknown flag", []string{"-target", "nginx", "-runs", "3"}, nil, 0, "", 0, "valid flags are"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			f, err := parseSoakFlags(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.minutes != tc.minutes || f.proto != tc.proto || f.interval != tc.interval || f.profile != "stress" {
				t.Errorf("minutes %v proto %s interval %v profile %s, want %v %s %v stress", f.minutes, f.proto, f.interval, f.profile, tc.minutes, tc.proto, tc.interval)
			}
			// k6 is given the minutes as a DURATION the scripts read, and the run's timeout
			// counts them
			if want := time.Duration(tc.minutes * float64(time.Minute)); f.timeout != 0 && f.timeout < want {
				t.Errorf("timeout %v shorter than the soak's %v", f.timeout, want)
			}
			if !settings.DurationRE.MatchString(f.duration()) || math.Abs(settings.Seconds(f.duration())-tc.minutes*60) > 1e-9 {
				t.Errorf("DURATION %q, want %v minutes", f.duration(), tc.minutes)
			}
		})
	}
}

// Every bad input to `proxybench soak -check` that needs targets.json says what is valid.
func TestSoakCheckTargets(t *testing.T) {
	badInputEnv(t)
	proxies, err := filepath.Abs(filepath.Join("..", "..", "proxies"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PROXYBENCH_PROXIES", proxies)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-target", "ngnix"}, `unknown target "ngnix": valid targets are all, direct`},
		{[]string{"-target", "pingora", "-proto", "h3"}, "pingora does not serve h3: PROTO is one of what it serves, h1, h1c, h2"},
		{[]string{"-target", "nginx", "-proto", "h2"}, ""},
		{[]string{"-target", "direct", "-proto", "h3"}, ""},
	} {
		err := cmdSoak(t.Context(), append([]string{"-check"}, tc.args...))
		if tc.want == "" && err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
