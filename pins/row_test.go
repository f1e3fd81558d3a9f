package pins

import (
	"bytes"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	out := "install: noise on stdout\n" +
		"pin\tnginx source (Debian trixie)\t1.26.3-3+deb13u7 (sha256)\tindex: 1.26.3-3+deb13u10\t1.26.3-3+deb13u7 (pinned)\n" +
		"pin\ttoo\tfew\tfields\n" +
		"pin\ttoo\tmany\tfields\there\tand here\n" +
		"pinned\tnot\ta\trow\there\n" +
		"pin\thaproxy source (Debian trixie)\t3.0.11-1+deb13u3 (sha256)\tindex: none\tNOTHING: 404\n"
	want := []struct {
		row    Row
		broken bool
	}{
		{Row{"nginx source (Debian trixie)", "1.26.3-3+deb13u7 (sha256)", "index: 1.26.3-3+deb13u10", "1.26.3-3+deb13u7 (pinned)"}, false},
		{Row{"haproxy source (Debian trixie)", "3.0.11-1+deb13u3 (sha256)", "index: none", "NOTHING: 404"}, true},
	}
	rows := Parse(strings.NewReader(out))
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		if rows[i] != w.row || rows[i].Broken() != w.broken {
			t.Errorf("row %d = %+v (broken %v), want %+v (broken %v)", i, rows[i], rows[i].Broken(), w.row, w.broken)
		}
	}
}

func TestPrint(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	Print(&b, []Row{{"a", "1", "index: 2", "1 (pinned)"}, {"longer name", "v3", "none", "NOTHING: 404"}})
	want := "WHAT         PINNED  REGISTRY NOW  AN INSTALL TODAY TAKES\n" +
		"a            1       index: 2      1 (pinned)\n" +
		"longer name  v3      none          NOTHING: 404\n"
	if b.String() != want {
		t.Fatalf("Print:\n%s\nwant\n%s", b.String(), want)
	}
}
