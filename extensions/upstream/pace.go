package upstream

import (
	"context"
	"net/http"
	"time"
)

// pacer spaces the parts of a streamed response: each part goes out no sooner than interval
// after the one before it. Never sooner, even when a part went out late (the machine busy, the
// client's window full): a ticker would send the next part on its old beat, closer to the late
// one than interval, and the probes read parts closer together than interval as parts a proxy
// held back and released together (scenarios/lib/probes.js). A late part thus delays the
// rest of the stream by as much, and never makes a burst.
type pacer struct {
	interval time.Duration // 0: no wait between parts
	last     time.Time     // when the last part was due
}

func newPacer(interval time.Duration) *pacer {
	return &pacer{interval: max(interval, 0), last: time.Now()}
}

// wait blocks until the next part is due; false when the client went away.
func (p *pacer) wait(ctx context.Context) bool {
	if p.interval == 0 {
		return ctx.Err() == nil
	}
	if d := p.interval - time.Since(p.last); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	p.last = time.Now()
	return ctx.Err() == nil
}

// writePaced writes n parts of a streamed body, part(i) the i-th, each flushed on its own and
// spaced by a pacer from interval; part is called only when its part is due, so it may stamp
// it. It returns the body bytes written, fewer than the parts' when the client went away.
func writePaced(ctx context.Context, w http.ResponseWriter, interval time.Duration, n int, part func(i int) []byte) (written int64) {
	pace := newPacer(interval)
	rc := http.NewResponseController(w)
	for i := range n {
		if i > 0 && !pace.wait(ctx) {
			return written
		}
		m, err := w.Write(part(i))
		written += int64(m)
		if err != nil {
			return written
		}
		if err := rc.Flush(); err != nil {
			return written
		}
	}
	return written
}
