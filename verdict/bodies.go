package verdict

import "fmt"

// bodyCut: a target that ends large bodies short (its read of the upstream timed out, a buffer
// or a size limit gave out) fails their checks on size; this says what happened to them, in
// how many, and of which size.
func bodyCut(r Run) string {
	c := r.Counts.BodyCut
	if c == 0 {
		return ""
	}
	return fmt.Sprintf("body cut short in %s responses: each ended before its %s bytes "+
		"(a 200 with fewer, or its connection or stream broken mid-body)", n(c), n(r.Counts.BodyBytes))
}
