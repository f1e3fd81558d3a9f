package sample

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/proxybench/proxybench/stack"
)

// CPUsAvailable is the number of CPUs this process may run on (sched_getaffinity), which is
// what a k6 started from it without pinning may use.
func CPUsAvailable() int { return len(cpusOf(0)) }

// cpusOf lists the CPUs process pid may run on (0: this process), ascending; every CPU
// (runtime.NumCPU) when its affinity cannot be read.
func cpusOf(pid int) []int {
	cpus, _ := stack.AvailableCPUsOf(pid)
	if len(cpus) == 0 {
		for c := range runtime.NumCPU() {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// statLines are the names of a set of CPUs' lines in /proc/stat (cpu0, cpu3, …).
type statLines map[string]bool

func statLinesOf(cpus []int) statLines {
	lines := statLines{}
	for _, c := range cpus {
		lines["cpu"+strconv.Itoa(c)] = true
	}
	return lines
}

// errNoIdle stands for a /proc/stat that could not be read before.
var errNoIdle = errors.New("/proc/stat unreadable")

// idleTicks is the idle time of a set of CPUs so far (/proc/stat: idle + iowait of each of
// their lines, in clock ticks): an I/O wait is an idle CPU.
func idleTicks(want statLines) (uint64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseIdle(data, want)
}

func parseIdle(data []byte, want statLines) (uint64, error) {
	var sum uint64
	found := 0
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		// cpuN user nice system idle iowait …
		if len(f) < 6 || !want[string(f[0])] {
			continue
		}
		idle, err1 := strconv.ParseUint(string(f[4]), 10, 64)
		wait, err2 := strconv.ParseUint(string(f[5]), 10, 64)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("/proc/stat: %s: unreadable idle or iowait", f[0])
		}
		sum += idle + wait
		found++
	}
	if found != len(want) {
		return 0, fmt.Errorf("/proc/stat: %d of the %d CPUs' lines found", found, len(want))
	}
	return sum, nil
}

var (
	childrenOnce sync.Once
	childrenOK   bool
)

// hasChildrenFiles tells whether the kernel exposes /proc/<pid>/task/<tid>/children
// (CONFIG_PROC_CHILDREN); without it the sampler scans /proc.
func hasChildrenFiles() bool {
	childrenOnce.Do(func() {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d/children", unix.Gettid()))
		childrenOK = err == nil
	})
	return childrenOK
}

func readChildren(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var kids []int
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, w := range bytes.Fields(data) {
			if n, err := strconv.Atoi(string(w)); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// scanProc reads every process's stat and indexes children by parent.
func scanProc() (map[int]procStat, map[int][]int) {
	stats := map[int]procStat{}
	children := map[int][]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return stats, children
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		stats[pid] = st
		children[st.ppid] = append(children[st.ppid], pid)
	}
	return stats, children
}

// readStat parses /proc/<pid>/stat (proc(5)): the fields after the command name, which is in
// parentheses and may itself hold spaces and parentheses. rss (field 24) is the same count of
// resident pages as status's VmRSS.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, data)
}

func parseStat(pid int, data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(data[i+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	num := func(n int) uint64 {
		v, _ := strconv.ParseUint(string(f[n-3]), 10, 64)
		return v
	}
	return procStat{
		pid:      pid,
		ppid:     int(num(4)),
		ticks:    num(14) + num(15),
		start:    num(22),
		rssPages: num(24),
	}, nil
}

// bootTicks is the time since boot in clock ticks, the unit of a process's starttime.
func bootTicks() uint64 {
	data, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := bytes.Fields(data)
	if len(f) == 0 {
		return 0
	}
	up, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return 0
	}
	return uint64(up * float64(clockTicks()))
}

func ticksToSeconds(t uint64) float64 { return float64(t) / float64(clockTicks()) }

var (
	clkTckOnce sync.Once
	clkTck     uint64
)

// clockTicks is CLK_TCK, what sysconf(_SC_CLK_TCK) returns: the kernel passes it to every
// process in its aux vector as AT_CLKTCK. 100 when that cannot be read (it is 100 on Linux).
func clockTicks() uint64 {
	clkTckOnce.Do(func() {
		clkTck = 100
		if v, err := auxvClockTicks(); err == nil && v > 0 {
			clkTck = v
		}
	})
	return clkTck
}

func auxvClockTicks() (uint64, error) {
	const atClkTck = 17 // AT_CLKTCK, <linux/auxvec.h>
	data, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return 0, err
	}
	word := strconv.IntSize / 8 // auxv entries are two unsigned longs
	get := func(b []byte) uint64 {
		if word == 4 {
			return uint64(binary.NativeEndian.Uint32(b))
		}
		return binary.NativeEndian.Uint64(b)
	}
	for i := 0; i+2*word <= len(data); i += 2 * word {
		k, v := get(data[i:]), get(data[i+word:])
		if k == atClkTck {
			return v, nil
		}
		if k == 0 {
			break
		}
	}
	return 0, errors.New("no AT_CLKTCK in /proc/self/auxv")
}
