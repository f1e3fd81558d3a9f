package upstream

import (
	"context"
	"testing"
	"time"
)

// TestPacerNeverSendsSooner proves a part that went out late pushes the next one back: the
// gap after it is a whole interval, not what is left of the old beat (as a ticker's would be),
// so a busy upstream never sends two parts closer together than interval. Timers only ever
// fire late, so the bound holds on any machine.
func TestPacerNeverSendsSooner(t *testing.T) {
	const interval = 20 * time.Millisecond
	tests := []struct {
		name string
		late time.Duration // how long past its time the part's wait began (the upstream descheduled)
	}{
		{"on time", 0},
		{"late by a quarter interval", interval / 4},
		{"late by more than an interval", 2 * interval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPacer(interval) // part 0 goes out now
			time.Sleep(interval + tc.late)
			if !p.wait(context.Background()) {
				t.Fatal("wait: false with the client there")
			}
			sent := time.Now() // part 1, late by tc.late
			if !p.wait(context.Background()) {
				t.Fatal("wait: false with the client there")
			}
			// the next part's timer starts in wait, a moment before sent: allow that moment
			if gap := time.Since(sent); gap < interval-time.Millisecond {
				t.Errorf("part 2 went out %v after part 1, want at least %v", gap, interval)
			}
		})
	}
}

func TestPacerStopsWhenTheClientGoes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, interval := range []time.Duration{0, time.Hour} {
		if newPacer(interval).wait(ctx) {
			t.Errorf("interval %v: wait true after the client went away", interval)
		}
	}
}
