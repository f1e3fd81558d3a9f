package soak

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/sample"
)

// The runner's readings become soak.json's samples: seconds since the sampler started, and
// each role's RSS and descriptors under its role.
func TestSamplesOf(t *testing.T) {
	tests := []struct {
		name string
		in   []sample.UsageSample
		want string // soak.json's samples
	}{
		{"none", nil, `null`},
		{
			"a role missing",
			[]sample.UsageSample{
				{At: 1500 * time.Millisecond, Trees: map[string]sample.TreeReading{roleTarget: {RSSBytes: 4096, FDs: 7}}},
				{At: 3 * time.Second, Trees: map[string]sample.TreeReading{}},
			},
			`[{"t_s":1.5,"procs":{"target":{"rss_bytes":4096,"fds":7}}},{"t_s":3,"procs":{}}]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(samplesOf(tc.in))
			if err != nil || string(got) != tc.want {
				t.Errorf("%s, %v; want %s", got, err, tc.want)
			}
		})
	}
}
