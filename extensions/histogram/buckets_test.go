package histogram

import (
	"math"
	"testing"
)

func TestBucketsCoarseGrid(t *testing.T) {
	t.Parallel()
	var h Histogram
	values := []float64{-3, -2.5, -0.1, 0, 0, 0.001, 0.0011, 1, 1.01, 1.2, 1.9, 2, 3, 100, 1e6}
	for _, v := range values {
		h.Add(v)
	}
	for _, sub := range []int{0, 2, 3, 8} {
		var total uint64
		prev := math.Inf(-1)
		for b := range h.Buckets(sub) {
			if b.Count == 0 || b.Lo > b.Hi || b.Lo < prev {
				t.Fatalf("sub %d: bucket %+v out of order or empty (previous lower bound %v)", sub, b, prev)
			}
			prev = b.Lo
			n := uint64(0)
			for _, v := range values {
				switch {
				case b.Lo == 0 && b.Hi == 0:
					if v == 0 {
						n++
					}
				case b.Hi <= 0:
					if v > b.Lo && v <= b.Hi {
						n++
					}
				default:
					if v >= b.Lo && v < b.Hi {
						n++
					}
				}
			}
			if n != b.Count {
				t.Errorf("sub %d: bucket %+v counts %d, the values in it are %d", sub, b, b.Count, n)
			}
			if b.Hi > 0 && (b.Index != GridIndex(b.Lo, sub) || GridBound(b.Index+1, sub) != b.Hi) {
				t.Errorf("sub %d: bucket %+v is not grid bucket %d", sub, b, GridIndex(b.Lo, sub))
			}
			total += b.Count
		}
		if total != h.Count() {
			t.Errorf("sub %d: buckets hold %d values, the histogram %d", sub, total, h.Count())
		}
	}
}
