package load

import "bytes"

// content is a body as the loop holds it: exact bytes (the / body, an upload's {"bytes":N}), or
// a text repeated to any size (the /bytes bodies and the uploads, up to 8 MiB), held as one run
// of repeats and never whole: the loop compares and sends bodies of any size with 64 KiB.
type content struct {
	want   []byte // the body; with period > 0, the text repeated (repeating)
	period int    // 0: want is the whole body; n > 0: the body is want's first n bytes repeated
}

// repeatRun is how many bytes of a repeated body one comparison covers at least: more than any
// read of the loop (32 KiB) or DATA frame (16 KiB by default), so that a read is one comparison.
const repeatRun = 64 << 10

// repeating is the content of a body that is text repeated, at any size: want holds whole
// repeats of text, repeatRun bytes at least, and one repeat more, so that from any offset of the
// body on, want[offset%period:] agrees with it for repeatRun bytes at least.
func repeating(text string) content {
	n := (repeatRun+len(text)-1)/len(text) + 1
	return content{want: bytes.Repeat([]byte(text), n), period: len(text)}
}

// from is the body's bytes from its offset off on, as many as want holds: for an exact
// body up to its end (none past it), for a repeated one repeatRun at least.
func (e content) from(off int) []byte {
	if e.period > 0 {
		return e.want[off%e.period:]
	}
	if off >= len(e.want) {
		return nil
	}
	return e.want[off:]
}

// bodyCheck compares a body with the one expected as it is read, piece by piece, without
// keeping it: a proxy that rewrites bytes of a body and keeps its length passes the size check,
// so the loop compares every byte. Its zero value with the content set is ready for a body;
// with want nil it compares nothing (the size alone is checked, as without the expect option).
type bodyCheck struct {
	content
	n         int  // body bytes seen
	differs   bool // a byte within the expected length differs from the expected one
	differsAt int  // the offset of the first that does
}

// reset readies the check for the next body.
func (c *bodyCheck) reset() {
	*c = bodyCheck{content: c.content}
}

// feed compares p, the body's next bytes, with the expected ones. Bytes past an exact body's end
// are not compared: the body's size says it is not the one expected.
func (c *bodyCheck) feed(p []byte) {
	for off := 0; !c.differs && c.want != nil && off < len(p); {
		w := c.from(c.n + off)
		if len(w) == 0 {
			break
		}
		k := min(len(w), len(p)-off)
		if at := firstDiff(w[:k], p[off:off+k]); at >= 0 {
			c.differs, c.differsAt = true, c.n+off+at
		}
		off += k
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
