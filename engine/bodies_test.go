package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
)

func TestParseBodySizes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec    string
		want    []int
		wantErr string
	}{
		{"0,1KiB,64KiB,1MiB,8MiB", []int{0, 1 << 10, 64 << 10, 1 << 20, 8 << 20}, ""},
		{" 8MiB , 100000, 100000B,1kib", []int{8 << 20, 100000, 1 << 10}, ""},
		{"9MiB", nil, "BODY_SIZES: 9MiB is over 8MiB"},
		{"8388609", nil, "over 8MiB"},
		{"-1", nil, `"-1" is not a size`},
		{"1GiB", nil, `"1GiB" is not a size`},
		{" , ", nil, "names no size"},
	}
	for _, tc := range tests {
		got, err := ParseBodySizes(tc.spec)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseBodySizes(%q) = %v, %v; want an error containing %q", tc.spec, got, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("ParseBodySizes(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
}

// The sweep runs only when MODES names it, after the matrix: per direction, per protocol of
// PROTOS, per size, every target in turn, each point once, with its size for the runner.
func TestBodyJobs(t *testing.T) {
	t.Parallel()
	p := Plan{
		Targets: []string{stack.Direct, "nginx"}, Protos: []string{"h2", "h1c"}, Modes: []string{"reused", BodiesMode},
		Runs: 3, BodySizes: []int{0, 1 << 20},
	}
	jobs := p.Matrix()
	var got []string
	for _, j := range jobs {
		if j.Body == nil {
			if len(got) > 0 {
				t.Errorf("%s %s after the sweep's runs: the sweep comes last", j.Scenario, j.Target)
			}
			continue
		}
		if j.Runs != 1 || j.Run > 1 || j.Mode() != BodiesMode {
			t.Errorf("%s %s %s: runs %d, run %d, mode %s: want each point once, mode bodies", j.Scenario, j.Proto, j.Target, j.Runs, j.Run, j.Mode())
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s", j.Scenario, j.Body.Direction, j.Proto, result.SizeLabel(int(j.Body.Bytes)), j.Target))
	}
	var want []string
	for _, d := range []struct{ scenario, dir string }{{"bodies-down", "download"}, {"bodies-up", "upload"}} {
		for _, proto := range []string{"h1c", "h2"} { // the catalogue's order
			for _, size := range []string{"0B", "1MiB"} {
				for _, target := range p.Targets {
					want = append(want, strings.Join([]string{d.scenario, d.dir, proto, size, target}, " "))
				}
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the sweep's runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	p.Modes = []string{"reused", "fresh", "probe"} // MODES=all
	if slices.ContainsFunc(p.Matrix(), func(j Job) bool { return j.Body != nil || j.Mode() == BodiesMode }) {
		t.Error("the default modes run the body-size sweep: it must run only when named")
	}
}
