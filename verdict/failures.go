package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// failureWords say why a probe's samples failed, by the why a script counted them under
// (probe_failures{why}, scenarios/lib/options.js FAILURE_WHY), in that order. %s is the
// sample's timeout.
var failureWords = []struct{ why, words string }{
	{"timeout", "no answer within %s (the connect, the TLS or QUIC handshake or the response's head hung)"},
	{"stalled", "the body stopped before its end and had not ended within %s"},
	{"refused", "connection refused"},
	{"reset", "connection reset or closed before the end"},
	{"tls", "TLS handshake failed"},
	{"no_upgrade", "no 101 within %s (the connect, the TLS handshake or the upgrade hung)"},
	{"not_upgraded", "the upgrade answered without a 101"},
	{"no_welcome", "upgraded, then no message within %s"},
	{"no_echo", "no echo within %s"},
	{"other", "another error (k6 printed it on stderr)"},
}

// samplesFailed says how a probe's failed samples ended, each within its timeout: the target
// hung, stalled or broke the connection, and the cell went on to its next sample.
func samplesFailed(r Run) string {
	if len(r.Counts.Failures) == 0 {
		return ""
	}
	timeout := "the sample's timeout"
	if ms := r.Plan.SampleTimeoutMS; ms > 0 {
		timeout = "the sample's " + strconv.FormatFloat(ms/1000, 'f', -1, 64) + " s timeout"
	}
	var parts []string
	var total float64
	known := map[string]bool{}
	for _, f := range failureWords {
		known[f.why] = true
		c := r.Counts.Failures[f.why]
		if c == 0 {
			continue
		}
		total += c
		words := f.words
		if strings.Contains(words, "%s") {
			words = fmt.Sprintf(words, timeout)
		}
		parts = append(parts, n(c)+" "+words)
	}
	// a why this verdict does not know (a newer script): said as it is
	for _, why := range slices.Sorted(maps.Keys(r.Counts.Failures)) {
		if c := r.Counts.Failures[why]; !known[why] && c > 0 {
			total += c
			parts = append(parts, n(c)+" "+why)
		}
	}
	return fmt.Sprintf("%s sample%s failed: %s", n(total), plural(total), strings.Join(parts, "; "))
}
