package sample

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// TreeUsage is the memory and the open files of the process tree rooted at pid, read from /proc
// as the Sampler walks a tree (walk, with a scan of /proc where the kernel has no children
// files): the sum of VmRSS over the tree, in bytes (/proc/<pid>/stat's rss, the same count of
// resident pages), and the number of open file descriptors (entries of /proc/<pid>/fd) over the
// tree. A process that exits while it is read is left out; an error when pid itself is gone
// or its descriptors cannot be listed (another user's process).
func TreeUsage(pid int) (rssBytes uint64, fds int, err error) {
	var stats map[int]procStat
	var kids map[int][]int
	if !hasChildrenFiles() {
		stats, kids = scanProc()
	}
	procs := walk(pid, stats, kids)
	if len(procs) == 0 || procs[0].pid != pid {
		return 0, 0, fmt.Errorf("process %d: not running", pid)
	}
	page := uint64(os.Getpagesize())
	for i, p := range procs {
		ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(p.pid), "fd"))
		if err != nil {
			if i == 0 {
				return 0, 0, fmt.Errorf("process %d: open files: %w", pid, err)
			}
			continue // exited meanwhile
		}
		rssBytes += p.rssPages * page
		fds += len(ents)
	}
	return rssBytes, fds, nil
}
