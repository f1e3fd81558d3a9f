package influxdb

import (
	"math"
	"strconv"

	"github.com/proxybench/proxybench/extensions/histogram"
)

// Mergeable histograms. A trend's percentiles can't be merged across the instances of a split
// run, its bucket counts can: for the trends of K6_INFLUXDB_HISTOGRAMS the output also writes
//
//	<trend>_bucket  per window and per run (agg=interval|run), one point per non-empty bucket of
//	                a grid of 2^bucketSubBits buckets per power of two, tag le (the bucket's upper
//	                bound), field count. The grid is the same in every instance, so summing count
//	                over instance_id (or any tag) per le gives the union's buckets exactly: a
//	                heatmap of the merged run. The grid is coarser than the histogram's own (256
//	                per power of two) so that a window's points stay a few dozen per series
//	                whatever the request rate.
//	<trend>_cdf     per run only (agg=run), one point per row of a fixed grid of 2^cdfSubBits
//	                buckets per power of two from cdfFloor to cdfTop, plus a row below and a row
//	                above it, every row written even when empty: tag le, fields below_lo (values
//	                under the row's lower bound), below (under its upper bound), count (all
//	                values), lo, hi (the row's bounds, narrowed to the series' exact min and max).
//	                Because every instance writes every row, the sums per le over instance_id are
//	                the union's cumulative counts, min(lo) and max(hi) the union's narrowed bounds,
//	                and InfluxQL can find a quantile q of the merged run: the row where
//	                sum(below_lo) < q·sum(count) ≤ sum(below), interpolated linearly inside it.
//	                The narrowing keeps a quantile within [min, max] (a top row [32, 33.4) holding
//	                only 32s would otherwise give a p99 above the max). Written once per run, so
//	                its few hundred rows per series don't load InfluxDB while the test runs.
const (
	bucketSubBits = 3 // 8 buckets per power of two, linear in it: a bucket spans 12.5% of its lower bound at most
	cdfSubBits    = 4 // 16 per power of two: a row spans 6.25% at most, the worst error of a quantile
)

var (
	cdfFloor = math.Ldexp(1, -6) // 15.6 µs for the ms of k6's time trends
	cdfTop   = math.Ldexp(1, 16) // 65.5 s: past k6's default request timeout
)

// histogramSet says which trends get bucket and cdf points.
type histogramSet struct {
	all   bool
	names map[string]bool
}

func newHistogramSet(names []string) histogramSet {
	s := histogramSet{names: map[string]bool{}}
	for _, n := range names {
		if n == "*" {
			s.all = true
		}
		s.names[n] = true
	}
	return s
}

func (s histogramSet) has(name string) bool { return s.all || s.names[name] }

func formatBound(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// buckets appends the <name>_bucket points of h.
func (e *encoder) buckets(name, agg, tags string, h *histogram.Histogram, ts int64) {
	if h == nil {
		return
	}
	for b := range h.Buckets(bucketSubBits) {
		e.fields = append(e.fields[:0], field{key: "count", value: float64(b.Count)})
		e.histPoint(name+"_bucket", agg, tags, formatBound(b.Hi), ts)
	}
}

// cdf appends the <name>_cdf rows of h, every one of them.
func (e *encoder) cdf(name, tags string, h *histogram.Histogram, ts int64) {
	if h == nil || h.Count() == 0 {
		return
	}
	first := histogram.GridIndex(cdfFloor, cdfSubBits)
	last := histogram.GridIndex(cdfTop, cdfSubBits)
	rows := make([]uint64, last-first+2) // below the floor, the grid, from the top up
	for b := range h.Buckets(cdfSubBits) {
		switch {
		case b.Index < first: // zeros and negatives too (Index ≤ 0)
			rows[0] += b.Count
		case b.Index >= last:
			rows[len(rows)-1] += b.Count
		default:
			rows[b.Index-first+1] += b.Count
		}
	}
	total := float64(h.Count())
	mn, mx := h.Min(), h.Max()
	below := 0.0
	for r, n := range rows {
		var lo, hi float64
		var le string
		switch r {
		case 0:
			lo, hi, le = math.Inf(-1), cdfFloor, formatBound(cdfFloor)
		case len(rows) - 1:
			lo, hi, le = cdfTop, math.Inf(1), "+Inf"
		default:
			lo, hi = histogram.GridBound(first+r-1, cdfSubBits), histogram.GridBound(first+r, cdfSubBits)
			le = formatBound(hi)
		}
		// a row outside [min, max] comes out inverted (lo > hi): it holds none of this
		// series' values, and the other instances' rows decide its merged bounds
		lo, hi = max(lo, mn), min(hi, mx)
		e.fields = append(e.fields[:0], field{key: "below_lo", value: below})
		below += float64(n)
		e.fields = append(e.fields, field{key: "below", value: below}, field{key: "count", value: total},
			field{key: "lo", value: lo}, field{key: "hi", value: hi})
		e.histPoint(name+"_cdf", aggRun, tags, le, ts)
	}
}

// histPoint appends one point of e.fields with the tags and le.
func (e *encoder) histPoint(measurement, agg, tags, le string, ts int64) {
	e.prefix = append(e.prefix[:0], measurementEscaper.Replace(measurement)...)
	e.prefix = append(e.prefix, ",agg="...)
	e.prefix = append(e.prefix, agg...)
	e.prefix = append(e.prefix, tags...)
	e.prefix = append(e.prefix, ",le="...)
	e.prefix = append(e.prefix, keyEscaper.Replace(le)...)
	var ok bool
	if e.buf, ok = appendPoint(e.buf, e.prefix, e.fields, ts); ok {
		e.points++
	}
}
