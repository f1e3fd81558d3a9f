package upstream

import (
	"fmt"
	"net/url"
	"strconv"
)

// intParam is a bounded integer query parameter. Bounds keep one request
// from tying the upstream up for long or asking it for unbounded memory.
type intParam struct {
	name     string
	def      int
	min, max int
}

func (p intParam) rangeError(got string) error {
	return fmt.Errorf("%s must be an integer in %d..%d, got %q", p.name, p.min, p.max, clip(got))
}

// maxEcho is how much of a client's value an error message quotes: enough to
// recognise it, and an answer to bad input that does not grow with the input.
const maxEcho = 64

// clip cuts s to maxEcho bytes, marking the cut.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return s[:maxEcho] + "..."
}

// parseInts fills out[i] with ps[i] read from a raw query string. Unknown
// parameters are ignored; a repeated one is an error since it is ambiguous.
func parseInts(rawQuery string, ps []intParam, out []int) error {
	for i, p := range ps {
		out[i] = p.def
	}
	if rawQuery == "" {
		return nil
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return fmt.Errorf("malformed query string: %w", err)
	}
	for i, p := range ps {
		vs, ok := q[p.name]
		if !ok {
			continue
		}
		if len(vs) != 1 {
			return fmt.Errorf("%s given %d times, want once, an integer in %d..%d", p.name, len(vs), p.min, p.max)
		}
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < p.min || n > p.max {
			return p.rangeError(vs[0])
		}
		out[i] = n
	}
	return nil
}
