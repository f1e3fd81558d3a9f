package result

import "testing"

func TestSizeLabel(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0B", 1: "1B", 1000: "1000B", KiB: "1KiB", 64 * KiB: "64KiB", 1536 * KiB: "1536KiB", MiB: "1MiB", 8 * MiB: "8MiB"} {
		if got := SizeLabel(n); got != want {
			t.Errorf("SizeLabel(%d) = %q, want %q", n, got, want)
		}
		// a label reads back as its size
		if back, err := ParseSize("X", want); err != nil || back != n {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", want, back, err, n)
		}
	}
	for _, bad := range []string{"", "KiB", "1.5MiB", "-1", "1GiB", "1 MB", "x"} {
		if _, err := ParseSize("BODY_SIZES", bad); err == nil {
			t.Errorf("ParseSize(%q) took it", bad)
		}
	}
}

// CPU per MB is the target's CPU over every body byte the run moved: 2 CPU-seconds over 1000
// requests of 1 MiB (1048.576 MB) is 1.907 ms per MB; a run of 0-byte bodies moved none.
func TestCPUPerMB(t *testing.T) {
	t.Parallel()
	b := &Body{Direction: Download, Bytes: MiB}
	if got := b.CPUPerMB(2, 1000); got == nil || *got != 1.907 {
		t.Errorf("CPUPerMB(2 s, 1000 × 1 MiB) = %v, want 1.907 ms/MB", got)
	}
	for _, tc := range []struct {
		bytes, cpu, requests float64
	}{{0, 2, 1000}, {MiB, 0, 1000}, {MiB, 2, 0}} {
		if got := (&Body{Bytes: tc.bytes}).CPUPerMB(tc.cpu, tc.requests); got != nil {
			t.Errorf("CPUPerMB(%v s, %v × %v B) = %v, want none", tc.cpu, tc.requests, tc.bytes, *got)
		}
	}
}
