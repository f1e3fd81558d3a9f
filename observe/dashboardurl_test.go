package observe

import (
	"testing"
	"time"
)

func TestDashboardURL(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	base := "http://127.0.0.1:3000/d/" + ComparisonUID + "?orgId=1&var-testid=a+b"
	for _, tc := range []struct {
		name              string
		started, finished time.Time
		want              string
	}{
		{"the run's window, padded", start, start.Add(time.Minute), base + "&from=1795694385000&to=1795694475000"},
		{"unfinished: the dashboard's default", start, time.Time{}, base},
		{"no start: the dashboard's default", time.Time{}, start, base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DashboardURL("http://127.0.0.1:3000", ComparisonUID, "a b", tc.started, tc.finished); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
