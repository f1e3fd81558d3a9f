package runner

import (
	"strings"
	"testing"
)

func TestSegmentArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		i, n int
		want string
	}{
		{0, 2, "--execution-segment 0:1/2 --execution-segment-sequence 0,1/2,1"},
		{1, 2, "--execution-segment 1/2:1 --execution-segment-sequence 0,1/2,1"},
		{1, 3, "--execution-segment 1/3:2/3 --execution-segment-sequence 0,1/3,2/3,1"},
	} {
		if got := strings.Join(SegmentArgs(tc.i, tc.n), " "); got != tc.want {
			t.Errorf("SegmentArgs(%d, %d) = %s, want %s", tc.i, tc.n, got, tc.want)
		}
	}
}

func TestParseSegments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{"", 1, ""},
		{"1", 1, ""},
		{" 3 ", 3, ""},
		{"0", 0, `SEGMENTS="0": want a whole number of at least 1`},
		{"-2", 0, `SEGMENTS="-2"`},
		{"two", 0, `SEGMENTS="two"`},
		{"1.5", 0, `SEGMENTS="1.5"`},
		{"+2", 0, `SEGMENTS="+2"`},
		{"100", 0, "at most 64"},
	} {
		got, err := ParseSegments(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("ParseSegments(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseSegments(%q): %v, want an error with %q", tc.in, err, tc.err)
		}
	}
	if err := CheckSegments("json", 2); err == nil || !strings.Contains(err.Error(), "json runs one VU") {
		t.Errorf("a probe split in 2: %v, want refused", err)
	}
	if err := CheckSegments("json", 1); err != nil {
		t.Errorf("a probe in 1 segment: %v", err)
	}
	if err := CheckSegments("fresh-h2", 4); err != nil {
		t.Errorf("fresh-h2 in 4 segments: %v", err)
	}
}
