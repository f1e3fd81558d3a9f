package sse

// bodyCheck compares a body with the one expected (the stream param expect) as it is read,
// read by read, without keeping any of it: a proxy that rewrites bytes of a body and keeps its
// length passes every size check, so each byte is held to the expected byte at its offset.
// Bytes past want's end are not compared, and a body that ends before want does is not a
// difference either: the body's size tells those apart (bytes).
type bodyCheck struct {
	want      string // the whole expected body (its UTF-8 bytes)
	n         int64  // body bytes seen
	differsAt int64  // the offset of the first byte that differs from want's; -1: none yet
}

func newBodyCheck(want string) *bodyCheck {
	return &bodyCheck{want: want, differsAt: -1}
}

// feed compares p, the body's next bytes (decoded), with want's at the same offset.
func (c *bodyCheck) feed(p []byte) {
	if c.differsAt < 0 && c.n < int64(len(c.want)) {
		if at := firstDiff(c.want[c.n:], p); at >= 0 {
			c.differsAt = c.n + int64(at)
		}
	}
	c.n += int64(len(p))
}

// firstDiff is the offset of the first byte of got that differs from want's, -1 when got
// agrees with want as far as both go. The common case, equal, is one comparison that copies
// nothing (the compiler compares string(got) in place).
func firstDiff(want string, got []byte) int {
	n := min(len(want), len(got))
	if string(got[:n]) == want[:n] {
		return -1
	}
	for i := range n {
		if got[i] != want[i] {
			return i
		}
	}
	return -1 // unreachable: they were not equal
}
