package upstream

import (
	"context"
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
