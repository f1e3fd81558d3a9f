package result

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Body is what a run of the body-size sweep (mode bodies, make bench MODES=bodies) moved: its
// direction and size, written by the script (scenarios/lib/bodysizes.js), or by the runner for
// a run that wrote nothing, so that every point of the sweep keeps its place; its rate; and the
// target's CPU per MB, written by the runner when it sampled the run.
type Body struct {
	Direction string  `json:"direction"` // Download (GET /bytes?size=N) or Upload (POST /upload of N bytes)
	Bytes     float64 `json:"bytes"`     // per request
	// MBPerS is the body megabytes (10^6 bytes) the run moved per second in its measured window:
	// rps × Bytes (nil: no rate).
	MBPerS *float64 `json:"mb_per_s,omitempty"`
	// TargetCPUMsPerMB is the target's CPU time (its whole process tree) per megabyte of body it
	// moved, in ms, over every request k6 sent (warm-up included, as cost's): nil for 0-byte
	// bodies, which move none, and for a run not sampled.
	TargetCPUMsPerMB *float64 `json:"target_cpu_ms_per_mb,omitempty"`
}

// The directions of a body-size sweep's run.
const (
	Download = "download"
	Upload   = "upload"
)

// CPUPerMB is the CPU ms per megabyte of body that cpuSeconds of CPU bought over requests
// requests of b's size, rounded to the µs; nil when they moved no byte.
func (b *Body) CPUPerMB(cpuSeconds, requests float64) *float64 {
	mb := requests * b.Bytes / 1e6
	if mb <= 0 || cpuSeconds <= 0 {
		return nil
	}
	v := Round(cpuSeconds*1e3/mb, 3)
	return &v
}

// Units of body sizes, as BODY_SIZES and the report write them.
const (
	KiB = 1 << 10
	MiB = 1 << 20
)

// SizeLabel is n bytes as a reader skims it and as ParseSize reads it back: 0B, 1KiB, 64KiB,
// 1MiB, 8MiB; 1000B for a size that is no whole number of KiB.
func SizeLabel(n int) string {
	switch {
	case n == 0:
		return "0B"
	case n%MiB == 0:
		return strconv.Itoa(n/MiB) + "MiB"
	case n%KiB == 0:
		return strconv.Itoa(n/KiB) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// ParseSize reads a body size: bytes (65536 or 65536B), or KiB and MiB (64KiB, 1MiB; the unit
// in any case). name is the setting's, for the error.
func ParseSize(name, s string) (int, error) {
	v := strings.TrimSpace(s)
	unit := 1
	lower := strings.ToLower(v)
	for _, u := range []struct {
		suffix string
		n      int
	}{{"kib", KiB}, {"mib", MiB}, {"b", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			v, unit = v[:len(v)-len(u.suffix)], u.n
			break
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > math.MaxInt32/unit {
		return 0, fmt.Errorf("%s: %q is not a size: bytes (65536), KiB or MiB (64KiB, 1MiB)", name, s)
	}
	return n * unit, nil
}
