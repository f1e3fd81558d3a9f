package runner

import (
	"context"

	"github.com/proxybench/proxybench/internal/result"
)

// idleCost is what an idle run's hold cost its target, from the run's samples (nil: not an
// idle run, not sampled, or a hold too short to have two samples): the target's RSS before k6
// started against its mean over the hold, per connection the client still held at its end.
func idleCost(ctx context.Context, s Sampling, res *result.Result) *result.IdleCost {
	from, to, ok := res.Idle.Hold()
	if s == nil || !ok {
		return nil
	}
	w, ok := s.Window(context.WithoutCancel(ctx), from, to)
	if !ok {
		return nil
	}
	held := 0.0
	if res.Counts != nil && res.Counts.ConnectionsHeld != nil {
		held = *res.Counts.ConnectionsHeld
	}
	return result.NewIdleCost(w.RSSBeforeMB, w.RSSMB, held, w.CPUSeconds, w.Seconds, w.Samples)
}
