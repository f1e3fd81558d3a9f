package soak

import (
	"math"
	"strings"
	"testing"
)

// series is a soak's samples every 2 s over 300 s, each process's RSS (MiB) and fds given as a
// function of the time.
func series(rss map[string]func(t float64) float64, fds map[string]func(t float64) int) []Sample {
	var out []Sample
	for t := 2.0; t <= 300; t += 2 {
		s := Sample{T: t, Procs: map[string]*Usage{}}
		for role, f := range rss {
			s.Procs[role] = &Usage{RSSBytes: uint64(f(t) * mib), FDs: fds[role](t)}
		}
		out = append(out, s)
	}
	return out
}

func TestJudgeSoak(t *testing.T) {
	procs := []*Process{{Role: roleK6, Name: "k6"}, {Role: roleTarget, Name: "nginx"}, {Role: roleUpstream, Name: "direct"}}
	// measured from 10 s to 290 s: baseline 10–66 s, end 234–290 s, middles 224 s apart
	w := Window{From: 10, To: 290}
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
			vs := judge(procs, series(tc.rss, tc.fds), w, rps)
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
					t.Errorf("%s: ok %v, want %v: %s", key, v.OK, !wantFail, figures(v))
				}
			}
		})
	}

	t.Run("a process gone by the end fails", func(t *testing.T) {
		s := series(map[string]func(float64) float64{roleK6: flat(100)}, map[string]func(float64) int{roleK6: flatFD(10)})
		for _, x := range s[:len(s)/2] {
			x.Procs[roleTarget] = &Usage{RSSBytes: 20 * mib, FDs: 20}
		}
		vs := judge(procs[:2], s, w, rps)
		for _, v := range vs {
			if v.Role == roleTarget && (v.OK || !strings.Contains(v.Why, "no sample in the end window")) {
				t.Errorf("target %s: ok %v, why %q, want a failure saying there is no sample at the end", v.Bound.Metric, v.OK, v.Why)
			}
		}
	})
}
