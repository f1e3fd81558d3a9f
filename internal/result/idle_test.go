package result

import (
	"testing"
	"time"
)

func TestNewIdleCost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                  string
		before, held, n, cpu  float64
		holdS                 float64
		wantKiB, wantCPUCores float64
	}{
		{"10 000 held, 20 MiB grown", 10, 30, 10000, 0.5, 10, 2.05, 0.05},
		{"none held: no figure per connection", 10, 12, 0, 0.5, 10, 0, 0.05},
		{"RSS shrank: a negative figure, said as it is", 40, 39, 1024, 0, 10, -1, 0},
	} {
		c := NewIdleCost(tc.before, tc.held, tc.n, tc.cpu, tc.holdS, 50)
		if c.KiBPerConnection != tc.wantKiB || c.CPUCores != tc.wantCPUCores || c.ConnectionsHeld != tc.n {
			t.Errorf("%s: %+v, want %v KiB per connection and %v cores", tc.name, c, tc.wantKiB, tc.wantCPUCores)
		}
	}
}

func TestIdleHold(t *testing.T) {
	t.Parallel()
	from, to, ok := (&Idle{HoldMS: []float64{1.7e12, 1.7e12 + 5000}}).Hold()
	if !ok || to.Sub(from) != 5*time.Second || from.UnixMilli() != 1.7e12 {
		t.Errorf("Hold() = %v, %v, %v", from, to, ok)
	}
	for _, i := range []*Idle{nil, {}, {HoldMS: []float64{5, 5}}} {
		if _, _, ok := i.Hold(); ok {
			t.Errorf("%+v: a hold without its window", i)
		}
	}
}
