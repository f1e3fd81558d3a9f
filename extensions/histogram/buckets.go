package histogram

import (
	"iter"
	"math"
)

// Bucket is one bucket of a histogram read on a grid of 2^subBits buckets per power of two:
// positive values in [Lo, Hi), negative ones in (Lo, Hi] (Lo = -hi of their magnitudes), and
// the zeros as Lo = Hi = 0. Index is the bucket's place on that grid (GridIndex), the same in
// every histogram, which is what lets two instances' buckets be added one to one.
type Bucket struct {
	Index  int
	Lo, Hi float64
	Count  uint64
}

// GridIndex is the index of the grid bucket of 2^subBits buckets per power of two that holds
// v > 0: the top 1+11+subBits bits of its IEEE 754 form, as for the histogram's own buckets.
func GridIndex(v float64, subBits int) int { return int(math.Float64bits(v) >> (52 - subBits)) }

// GridBound is the lower bound of grid bucket i (and the upper bound of bucket i-1).
func GridBound(i, subBits int) float64 { return math.Float64frombits(uint64(i) << (52 - subBits)) }

// Buckets yields the non-empty buckets on a grid of 2^subBits buckets per power of two, in
// ascending order of value; 0 ≤ subBits ≤ SubBits, so that each of the histogram's own buckets
// falls in exactly one of the grid's and the counts stay exact. Negative buckets have negative
// Index (minus that of their magnitude's bucket).
func (h *Histogram) Buckets(subBits int) iter.Seq[Bucket] {
	subBits = min(max(subBits, 0), SubBits)
	coarse := SubBits - subBits
	return func(yield func(Bucket) bool) {
		// negatives: the largest magnitude first
		var cur Bucket
		emit := func() bool { return cur.Count == 0 || yield(cur) }
		for j := len(h.neg.counts) - 1; j >= 0; j-- {
			n := h.neg.counts[j]
			if n == 0 {
				continue
			}
			c := (h.neg.off + j) >> coarse
			if cur.Count > 0 && cur.Index != -c {
				if !emit() {
					return
				}
				cur = Bucket{}
			}
			cur.Index, cur.Lo, cur.Hi = -c, -GridBound(c+1, subBits), -GridBound(c, subBits)
			cur.Count += n
		}
		if !emit() {
			return
		}
		cur = Bucket{}
		if h.zeros > 0 && !yield(Bucket{Count: h.zeros}) {
			return
		}
		for j, n := range h.pos.counts {
			if n == 0 {
				continue
			}
			c := (h.pos.off + j) >> coarse
			if cur.Count > 0 && cur.Index != c {
				if !emit() {
					return
				}
				cur = Bucket{}
			}
			cur.Index, cur.Lo, cur.Hi = c, GridBound(c, subBits), GridBound(c+1, subBits)
			cur.Count += n
		}
		emit()
	}
}
