// Package histogram is a log-linear histogram of float64 values and its JSON form: what a k6
// instance writes (histout, the InfluxDB output) and another process merges (runner).
package histogram

import "math"

// Histogram is a log-linear histogram (HDR-like) of float64 values: every power of two is cut
// into 2^SubBits equal buckets. A bucket's index is the top bits of the IEEE 754 representation
// (exponent and the first SubBits of the mantissa), so adding a value is a shift and an
// increment, with no logarithm. A bucket [lo, hi) has hi-lo = lo/2^SubBits at most, so its
// midpoint is within RelErr = 2^-(SubBits+1) of any value in it: 0.2% for SubBits = 8.
//
// Zero and negative values (a custom Trend may have them) are counted apart: zeros exactly,
// negatives in a mirror histogram of their magnitudes. min and max are exact, and every
// quantile is clamped to [min, max].
type Histogram struct {
	pos, neg buckets
	zeros    uint64
	count    uint64
	sum      float64
	min, max float64
}

const (
	// SubBits is the number of buckets per power of two, as a power of two: 2^SubBits.
	SubBits = 8
	shift   = 52 - SubBits
	// RelErr is the largest relative error of a quantile against the exact one of the same
	// samples (k6's linear interpolation between the two nearest ranks).
	RelErr = 1.0 / (1 << (SubBits + 1))
)

// buckets is a dense run of counters starting at bucket index off.
type buckets struct {
	off    int
	counts []uint64
}

func bucketOf(v float64) int { return int(math.Float64bits(v) >> shift) }

// bucketMid is the midpoint of bucket i (always positive).
func bucketMid(i int) float64 {
	lo := math.Float64frombits(uint64(i) << shift)
	hi := math.Float64frombits(uint64(i+1) << shift)
	return lo + (hi-lo)/2
}

func (b *buckets) add(i int, n uint64) {
	switch {
	case b.counts == nil:
		b.off = i
		b.counts = make([]uint64, 1, 64)
	case i < b.off:
		grown := make([]uint64, b.off-i+len(b.counts), b.off-i+cap(b.counts))
		copy(grown[b.off-i:], b.counts)
		b.counts, b.off = grown, i
	case i-b.off >= len(b.counts):
		need := i - b.off + 1
		if need > cap(b.counts) {
			grown := make([]uint64, need, 2*need)
			copy(grown, b.counts)
			b.counts = grown
		}
		b.counts = b.counts[:need]
	}
	b.counts[i-b.off] += n
}

func (b *buckets) merge(o *buckets) {
	for j, n := range o.counts {
		if n != 0 {
			b.add(o.off+j, n)
		}
	}
}

// Add records one value. NaN is ignored; ±Inf are counted (k6 never emits them).
func (h *Histogram) Add(v float64) {
	if math.IsNaN(v) {
		return
	}
	if h.count == 0 || v < h.min {
		h.min = v
	}
	if h.count == 0 || v > h.max {
		h.max = v
	}
	h.count++
	h.sum += v
	switch {
	case v > 0:
		h.pos.add(bucketOf(v), 1)
	case v < 0:
		h.neg.add(bucketOf(-v), 1)
	default:
		h.zeros++
	}
}

// Merge adds every value of o.
func (h *Histogram) Merge(o *Histogram) {
	if o.count == 0 {
		return
	}
	if h.count == 0 || o.min < h.min {
		h.min = o.min
	}
	if h.count == 0 || o.max > h.max {
		h.max = o.max
	}
	h.count += o.count
	h.sum += o.sum
	h.zeros += o.zeros
	h.pos.merge(&o.pos)
	h.neg.merge(&o.neg)
}

// valueAt is the estimate of the value of rank r (0-based) in sorted order.
func (h *Histogram) valueAt(r uint64) float64 {
	var v float64
	switch nn := h.negCount(); {
	case r < nn:
		// negatives, most negative first: walk the magnitudes from the largest down
		seen := uint64(0)
		for j := len(h.neg.counts) - 1; j >= 0; j-- {
			seen += h.neg.counts[j]
			if r < seen {
				v = -bucketMid(h.neg.off + j)
				break
			}
		}
	case r < nn+h.zeros:
		v = 0
	default:
		seen := nn + h.zeros
		for j, n := range h.pos.counts {
			seen += n
			if r < seen {
				v = bucketMid(h.pos.off + j)
				break
			}
		}
	}
	return math.Min(math.Max(v, h.min), h.max)
}

func (h *Histogram) negCount() uint64 {
	var n uint64
	for _, c := range h.neg.counts {
		n += c
	}
	return n
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) the way k6's Trend does it: linear
// interpolation between the values of ranks ⌊q(n-1)⌋ and ⌈q(n-1)⌉. Each of the two is within
// RelErr of the true value of its rank, so the result is within RelErr of k6's exact figure.
func (h *Histogram) Quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	if q <= 0 {
		return h.min
	}
	if q >= 1 {
		return h.max
	}
	pos := q * float64(h.count-1)
	lo := math.Floor(pos)
	a := h.valueAt(uint64(lo))
	frac := pos - lo
	if frac == 0 {
		return a
	}
	b := h.valueAt(uint64(lo) + 1)
	return a + frac*(b-a)
}

// Mean is sum/count, 0 without values.
func (h *Histogram) Mean() float64 {
	if h.count == 0 {
		return 0
	}
	return h.sum / float64(h.count)
}

// Count is the number of values added.
func (h *Histogram) Count() uint64 { return h.count }

// Sum is the sum of the values added.
func (h *Histogram) Sum() float64 { return h.sum }

// Min is the smallest value added (0 without values).
func (h *Histogram) Min() float64 { return h.min }

// Max is the largest value added (0 without values).
func (h *Histogram) Max() float64 { return h.max }
