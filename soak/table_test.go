package soak

import "testing"

func TestSoakRows(t *testing.T) {
	var short []Sample
	for t := 2.0; t <= 120; t += 2 {
		short = append(short, Sample{T: t})
	}
	if got := rows(short); len(got) != len(short) {
		t.Errorf("a 2-minute run at 2 s: %d rows, want every sample", len(got))
	}
	var long []Sample
	for t := 10.0; t <= 600; t += 10 {
		long = append(long, Sample{T: t})
	}
	rows := rows(long)
	if len(rows) != 11 || rows[0].T != 10 || rows[1].T != 60 || rows[len(rows)-1].T != 600 {
		var ts []float64
		for _, r := range rows {
			ts = append(ts, r.T)
		}
		t.Errorf("a 10-minute run every 10 s: rows at %v, want one per minute and the last", ts)
	}
}
