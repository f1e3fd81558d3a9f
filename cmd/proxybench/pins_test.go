package main

import (
	"strings"
	"testing"
)

func TestParsePins(t *testing.T) {
	out := "install: noise on stdout\n" +
		"pin\tnginx source (Debian trixie)\t1.26.3-3+deb13u7 (sha256)\tindex: 1.26.3-3+deb13u10\t1.26.3-3+deb13u7 (pinned)\n" +
		"pin\ttoo\tfew\tfields\n" +
		"pin\thaproxy source (Debian trixie)\t3.0.11-1+deb13u3 (sha256)\tindex: none\tNOTHING: 404\n"
	rows := parsePins(strings.NewReader(out))
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	if r := rows[0]; r.what != "nginx source (Debian trixie)" || r.pinned != "1.26.3-3+deb13u7 (sha256)" || r.now != "index: 1.26.3-3+deb13u10" || r.broken() {
		t.Errorf("row 0 = %+v", r)
	}
	if !rows[1].broken() {
		t.Errorf("row 1 takes %q: want it broken", rows[1].take)
	}
}
