package sample

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

func TestParseIdle(t *testing.T) {
	t.Parallel()
	stat := []byte("cpu  35170 0 8134 16502 868 0 66 120 0 0\n" +
		"cpu0 16708 0 3650 9972 81 0 7 59 0 0\n" +
		"cpu1 18462 0 4483 6529 787 0 59 61 0 0\n" +
		"intr 1 2 3\n")
	tests := []struct {
		cpus []int
		want uint64
		err  bool
	}{
		{[]int{0}, 9972 + 81, false},
		{[]int{1}, 6529 + 787, false},
		{[]int{0, 1}, 9972 + 81 + 6529 + 787, false},
		{[]int{2}, 0, true},    // not in the file: no figure rather than a wrong one
		{[]int{0, 3}, 0, true}, //
	}
	for _, tc := range tests {
		got, err := parseIdle(stat, statLinesOf(tc.cpus))
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseIdle(%v) = %d, %v; want %d, error %v", tc.cpus, got, err, tc.want, tc.err)
		}
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	// A command name with a space and a parenthesis, as nginx's "nginx: worker process" has.
	line := "4242 (nginx: wo) rker) S 4241 4241 4241 0 -1 4194624 100 0 0 0 " +
		"150 25 0 0 20 0 1 0 987654 123456789 3072 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
	st, err := parseStat(4242, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != 4241 || st.ticks != 175 || st.start != 987654 || st.rssPages != 3072 {
		t.Errorf("parseStat = %+v", st)
	}
	if _, err := parseStat(1, []byte("1 (x")); err == nil {
		t.Error("a truncated stat parsed")
	}
}

func TestRSSIsVmRSS(t *testing.T) {
	t.Parallel()
	st, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			var kb float64
			_, _ = fmt.Sscan(f[1], &kb)
			got := float64(st.rssPages) * float64(os.Getpagesize()) / 1024
			if math.Abs(got-kb) > 0.2*kb {
				t.Errorf("stat rss = %.0f kB, status VmRSS = %.0f kB", got, kb)
			}
			return
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
}

func TestClockTicksAndCPUs(t *testing.T) {
	t.Parallel()
	if v := clockTicks(); v != 100 {
		t.Logf("CLK_TCK = %d (not 100: unusual, but read from the aux vector)", v)
	}
	if _, err := auxvClockTicks(); err != nil {
		t.Errorf("AT_CLKTCK: %v", err)
	}
	if n := CPUsAvailable(); n < 1 {
		t.Errorf("CPUsAvailable = %d", n)
	}
}
