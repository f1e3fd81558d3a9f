package cluster

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"syscall"
)

// shortHash is 6 hex digits of s: a name that follows a folder and fits an interface's 15 bytes.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:6]
}

// mountsUnder are the mount points at or under dir, the deepest first.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	slices.SortFunc(points, func(a, b string) int {
		if d := strings.Count(b, "/") - strings.Count(a, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(points), sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			n := 0
			for _, c := range s[i+1 : i+4] {
				n = n*8 + int(c-'0')
			}
			b.WriteByte(byte(n))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmount detaches p (MNT_DETACH: a busy mount goes once its last user does).
func unmount(p string) error {
	err := syscall.Unmount(p, syscall.MNT_DETACH)
	if err == syscall.EINVAL || err == syscall.ENOENT {
		return nil
	}
	return err
}
