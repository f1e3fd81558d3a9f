package main

import (
	"context"
	"time"
)

// pacer spaces the parts of a streamed response. A ticker rather than a
// sleep per part keeps the cadence when writing a part takes time.
type pacer struct {
	t *time.Ticker // nil: no wait between parts
}

func newPacer(interval time.Duration) pacer {
	if interval <= 0 {
		return pacer{}
	}
	return pacer{t: time.NewTicker(interval)}
}

// wait blocks until the next part is due; false when the client went away.
func (p pacer) wait(ctx context.Context) bool {
	if p.t == nil {
		return ctx.Err() == nil
	}
	select {
	case <-p.t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p pacer) stop() {
	if p.t != nil {
		p.t.Stop()
	}
}
