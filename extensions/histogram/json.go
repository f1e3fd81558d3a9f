package histogram

import (
	"encoding/json"
	"fmt"
)

// wire is a Histogram as JSON: what one k6 instance writes and another process merges. A
// bucket is named by its index (the top 1+11+SubBits bits of the value's IEEE 754 form), so
// sub_bits says how to read the indexes and two histograms merge only with the same.
type wire struct {
	SubBits int         `json:"sub_bits"`
	Count   uint64      `json:"count"`
	Sum     float64     `json:"sum"`
	Min     float64     `json:"min"`
	Max     float64     `json:"max"`
	Zeros   uint64      `json:"zeros,omitempty"`
	Pos     *wireBucket `json:"pos,omitempty"`
	Neg     *wireBucket `json:"neg,omitempty"`
}

// wireBucket is a dense run of counts from bucket index Off.
type wireBucket struct {
	Off    int      `json:"off"`
	Counts []uint64 `json:"counts"`
}

func toWire(b buckets) *wireBucket {
	if len(b.counts) == 0 {
		return nil
	}
	return &wireBucket{Off: b.off, Counts: b.counts}
}

// MarshalJSON writes the histogram as its buckets and exact count, sum, min and max.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	return json.Marshal(wire{
		SubBits: SubBits, Count: h.count, Sum: h.sum, Min: h.min, Max: h.max,
		Zeros: h.zeros, Pos: toWire(h.pos), Neg: toWire(h.neg),
	})
}

// UnmarshalJSON reads what MarshalJSON wrote, and refuses buckets of another resolution or
// counts that do not add up.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.SubBits != SubBits {
		return fmt.Errorf("histogram: sub_bits %d, this build reads %d", w.SubBits, SubBits)
	}
	*h = Histogram{zeros: w.Zeros, sum: w.Sum, min: w.Min, max: w.Max}
	for _, p := range []struct {
		from *wireBucket
		to   *buckets
	}{{w.Pos, &h.pos}, {w.Neg, &h.neg}} {
		if p.from == nil {
			continue
		}
		for j, n := range p.from.Counts {
			if n != 0 {
				p.to.add(p.from.Off+j, n)
			}
		}
	}
	n := h.zeros
	for _, b := range []buckets{h.pos, h.neg} {
		for _, c := range b.counts {
			n += c
		}
	}
	if n != w.Count {
		return fmt.Errorf("histogram: buckets hold %d values, count says %d", n, w.Count)
	}
	h.count = w.Count
	return nil
}
