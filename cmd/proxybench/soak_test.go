package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			if !durationRE.MatchString(f.duration()) || math.Abs(durationSeconds(f.duration())-tc.minutes*60) > 1e-9 {
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

// series is a soak's samples every 2 s over 300 s, each process's RSS (MiB) and fds given as a
// function of the time.
func series(rss map[string]func(t float64) float64, fds map[string]func(t float64) int) []soakSample {
	var out []soakSample
	for t := 2.0; t <= 300; t += 2 {
		s := soakSample{T: t, Procs: map[string]*soakUsage{}}
		for role, f := range rss {
			s.Procs[role] = &soakUsage{RSSBytes: uint64(f(t) * mib), FDs: fds[role](t)}
		}
		out = append(out, s)
	}
	return out
}

func TestJudgeSoak(t *testing.T) {
	procs := []*soakProc{{Role: roleK6, Name: "k6"}, {Role: roleTarget, Name: "nginx"}, {Role: roleUpstream, Name: "direct"}}
	// measured from 10 s to 290 s: baseline 10–66 s, end 234–290 s, middles 224 s apart
	w := soakWindow{From: 10, To: 290}
	const rps = 10000 // 2.24 M requests between the middles
	flat := func(v float64) func(float64) float64 { return func(float64) float64 { return v } }
	flatFD := func(v int) func(float64) int { return func(float64) int { return v } }
	// k6's trend storage at k6MeasuredMiBPerMillion, with the steps of Go's heap: RSS jumps by
	// up to half again now and then
	k6Trend := func(t float64) float64 {
		live := 80 + k6MeasuredMiBPerMillion*rps*t/1e6
		if int(t)%20 < 6 {
			return live * 1.5
		}
		return live
	}
	leak := func(perReqBytes float64) func(float64) float64 {
		return func(t float64) float64 { return 20 + perReqBytes*rps*t/mib }
	}
	noisy := func(base float64) func(float64) float64 {
		return func(t float64) float64 { return base + 3*math.Sin(t/7) }
	}
	fdNoise := func(base int) func(float64) int {
		return func(t float64) int { return base + int(t)%5 }
	}

	tests := []struct {
		name string
		rss  map[string]func(float64) float64
		fds  map[string]func(float64) int
		fail []string // role/metric that fail; none: every one passes
	}{
		{
			"flat passes",
			map[string]func(float64) float64{roleK6: flat(100), roleTarget: flat(20), roleUpstream: flat(15)},
			map[string]func(float64) int{roleK6: flatFD(110), roleTarget: flatFD(220), roleUpstream: flatFD(30)},
			nil,
		},
		{
			"noise passes",
			map[string]func(float64) float64{roleK6: noisy(100), roleTarget: noisy(20), roleUpstream: noisy(15)},
			map[string]func(float64) int{roleK6: fdNoise(110), roleTarget: fdNoise(220), roleUpstream: fdNoise(30)},
			nil,
		},
		{
			"k6's trend storage passes",
			map[string]func(float64) float64{roleK6: k6Trend, roleTarget: flat(20), roleUpstream: flat(15)},
			map[string]func(float64) int{roleK6: flatFD(110), roleTarget: flatFD(220), roleUpstream: flatFD(30)},
			nil,
		},
		{
			"a target leaking 64 bytes a request fails",
			map[string]func(float64) float64{roleK6: flat(100), roleTarget: leak(64), roleUpstream: flat(15)},
			map[string]func(float64) int{roleK6: flatFD(110), roleTarget: flatFD(220), roleUpstream: flatFD(30)},
			[]string{"target/rss_mib"},
		},
		{
			"k6 leaking beyond its trend storage fails",
			map[string]func(float64) float64{roleK6: func(t float64) float64 { return k6Trend(t) + leak(150)(t) }, roleTarget: flat(20), roleUpstream: flat(15)},
			map[string]func(float64) int{roleK6: flatFD(110), roleTarget: flatFD(220), roleUpstream: flatFD(30)},
			[]string{"k6/rss_mib"},
		},
		{
			"an upstream leaking descriptors fails",
			map[string]func(float64) float64{roleK6: flat(100), roleTarget: flat(20), roleUpstream: flat(15)},
			map[string]func(float64) int{roleK6: flatFD(110), roleTarget: flatFD(220), roleUpstream: func(t float64) int { return 30 + int(t/10) }},
			[]string{"upstream/fds"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs := judgeSoak(procs, series(tc.rss, tc.fds), w, rps)
			if len(vs) != 6 {
				t.Fatalf("%d verdicts, want 6 (RSS and fds of 3 processes)", len(vs))
			}
			for _, v := range vs {
				key := v.Role + "/" + v.Bound.Metric
				wantFail := false
				for _, f := range tc.fail {
					wantFail = wantFail || f == key
				}
				if v.Why != "" || v.BaselineSamples < 2 || v.EndSamples < 2 {
					t.Errorf("%s: judged on %d and %d samples: %s", key, v.BaselineSamples, v.EndSamples, v.Why)
				}
				if v.OK == wantFail {
					t.Errorf("%s: ok %v, want %v: %s", key, v.OK, !wantFail, soakFigures(v))
				}
			}
		})
	}

	t.Run("a process gone by the end fails", func(t *testing.T) {
		s := series(map[string]func(float64) float64{roleK6: flat(100)}, map[string]func(float64) int{roleK6: flatFD(10)})
		for _, x := range s[:len(s)/2] {
			x.Procs[roleTarget] = &soakUsage{RSSBytes: 20 * mib, FDs: 20}
		}
		vs := judgeSoak(procs[:2], s, w, rps)
		for _, v := range vs {
			if v.Role == roleTarget && (v.OK || !strings.Contains(v.Why, "no sample in the end window")) {
				t.Errorf("target %s: ok %v, why %q, want a failure saying there is no sample at the end", v.Bound.Metric, v.OK, v.Why)
			}
		}
	})
}

func TestSoakRows(t *testing.T) {
	var short []soakSample
	for t := 2.0; t <= 120; t += 2 {
		short = append(short, soakSample{T: t})
	}
	if got := soakRows(short); len(got) != len(short) {
		t.Errorf("a 2-minute run at 2 s: %d rows, want every sample", len(got))
	}
	var long []soakSample
	for t := 10.0; t <= 600; t += 10 {
		long = append(long, soakSample{T: t})
	}
	rows := soakRows(long)
	if len(rows) != 11 || rows[0].T != 10 || rows[1].T != 60 || rows[len(rows)-1].T != 600 {
		var ts []float64
		for _, r := range rows {
			ts = append(ts, r.T)
		}
		t.Errorf("a 10-minute run every 10 s: rows at %v, want one per minute and the last", ts)
	}
}
