package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/settings"
)

func TestParseBenchFlags(t *testing.T) {
	for _, k := range append([]string{"PROTOS", "MODES", "BODY_SIZES", "RUNS", "DASHBOARD", "RESTART", "PROFILE", "PIN", "TARGET", "TARGETS"}, append(settings.Knobs(settings.Duration), settings.Knobs(settings.Count)...)...) {
		t.Setenv(k, "")
	}
	tests := []struct {
		args    []string
		protos  []string
		modes   []string
		runs    int
		wantErr string // a part of the error; "" for none
	}{
		{nil, allProtos, allModes, 1, ""},
		{[]string{"-profile", "stable"}, allProtos, allModes, 5, ""},
		{[]string{"-profile", "stress", "-runs", "2"}, allProtos, allModes, 2, ""},
		{[]string{"-protos", "h2, h1c,h2,", "-modes", "probe"}, []string{"h2", "h1c"}, []string{"probe"}, 1, ""},
		// the body-size sweep runs only when named: "all" is the default bench's modes
		{[]string{"-modes", "bodies"}, allProtos, []string{"bodies"}, 1, ""},
		{[]string{"-modes", "reused,bodies"}, allProtos, []string{"reused", "bodies"}, 1, ""},
		{[]string{"-modes", "all"}, allProtos, allModes, 1, ""},
		{[]string{"-profile", "huge"}, nil, nil, 0, `unknown PROFILE "huge"`},
		{[]string{"-runs", "0"}, nil, nil, 0, `RUNS="0"`},
		{[]string{"-runs", "three"}, nil, nil, 0, `RUNS="three"`},
		{[]string{"-protos", "h4"}, nil, nil, 0, `unknown PROTOS "h4": valid are all, or a comma-separated list of h1, h1c, h2, h3`},
		{[]string{"-protos", ","}, nil, nil, 0, `PROTOS="," names nothing`},
		{[]string{"-modes", "warm"}, nil, nil, 0, `unknown MODES "warm"`},
		{[]string{"-testid", "../x"}, nil, nil, 0, `TESTID "../x"`},
		{[]string{"-testid", "run.1_a-b"}, allProtos, allModes, 1, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, err := parseBenchFlags(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.protos, tc.protos) || !slices.Equal(f.modes, tc.modes) || f.runs != tc.runs {
				t.Errorf("protos %v modes %v runs %d, want %v %v %d", f.protos, f.modes, f.runs, tc.protos, tc.modes, tc.runs)
			}
			// BODY_SIZES' default, settings/table.go's: 0 B to 8 MiB
			if want := []int{0, 1 << 10, 64 << 10, 1 << 20, 8 << 20}; !slices.Equal(f.bodySizes, want) {
				t.Errorf("body sizes %v, want %v", f.bodySizes, want)
			}
		})
	}
}

func TestWithBaseline(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"nginx", "caddy"}, []string{"direct", "nginx", "caddy"}},
		{[]string{"direct", "nginx"}, []string{"direct", "nginx"}},
		{[]string{"nginx", "direct"}, []string{"nginx", "direct"}},
	}
	for _, tc := range tests {
		if got := withBaseline(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("withBaseline(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
