package load

import "bytes"

// bodyCheck compares a body with the one expected as it is read, piece by piece, without
// keeping it: a proxy that rewrites bytes of a body and keeps its length passes the size check,
// so the loop compares every byte. Its zero value with want set is ready for a body; with want
// nil it compares nothing (the size alone is checked, as without the expect option).
type bodyCheck struct {
	want      []byte
	n         int  // body bytes seen
	differs   bool // a byte within want's length differs from want's
	differsAt int  // the offset of the first that does
}

// feed compares p, the body's next bytes, with want's. Bytes past want's end are not compared:
// the body's size says it is not want.
func (c *bodyCheck) feed(p []byte) {
	if !c.differs && c.n < len(c.want) {
		if at := firstDiff(c.want[c.n:], p); at >= 0 {
			c.differs, c.differsAt = true, c.n+at
		}
	}
	c.n += len(p)
}

// firstDiff is the offset of the first byte of got that differs from want's, -1 when got
// agrees with want as far as both go. The common case, equal, is one memequal.
func firstDiff(want, got []byte) int {
	n := min(len(want), len(got))
	if bytes.Equal(want[:n], got[:n]) {
		return -1
	}
	for i := range n {
		if want[i] != got[i] {
			return i
		}
	}
	return -1 // unreachable: bytes.Equal said they differ
}
