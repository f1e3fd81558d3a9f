package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// protoLabel names a protocol as a reader knows it.
var protoLabel = map[string]string{
	"h1": "HTTP/1.1 TLS", "h1c": "HTTP/1.1 cleartext", "h2": "HTTP/2 TLS", "h3": "HTTP/3 QUIC",
}

func protoName(p string) string {
	if l, ok := protoLabel[p]; ok {
		return l
	}
	return p
}

func nonEmpty(xs ...string) []string {
	var out []string
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// approx is a rate as a reader skims it: ~72k, ~4.5k, ~950.
func approx(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("~%.0fk", v/1000)
	case v >= 1000:
		return fmt.Sprintf("~%.1fk", v/1000)
	}
	return fmt.Sprintf("~%.0f", v)
}

// fmtInt rounds to a whole number with thousands separators: 71,969.
func fmtInt(v float64) string {
	n := int64(math.Round(v))
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	var sb strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(ch)
	}
	if neg {
		return "-" + sb.String()
	}
	return sb.String()
}

// ms formats milliseconds as every table shows them: two decimals below 100.
func ms(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
