package image

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// libDirs are where ELFDeps finds libraries: Debian's for amd64, the machines' system.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64"}

// ELFDeps returns the files of this machine a dynamically linked amd64 executable needs to run
// in an image: its interpreter (PT_INTERP) and its DT_NEEDED libraries, theirs in turn, sorted.
// A static executable needs none. Each path is where the loader looks for the file, so it is
// also the path to give it in the image.
func ELFDeps(path string) ([]string, error) {
	seen := map[string]bool{}
	interp, err := elfDeps(path, seen)
	if err != nil {
		return nil, err
	}
	if interp != "" {
		seen[interp] = true
	}
	deps := make([]string, 0, len(seen))
	for p := range seen {
		deps = append(deps, p)
	}
	sort.Strings(deps)
	return deps, nil
}

// elfDeps adds the libraries path needs, and theirs, to seen, and returns its interpreter.
func elfDeps(path string, seen map[string]bool) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("image.ELFDeps: %w", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return "", fmt.Errorf("image.ELFDeps: %s is for %s, not amd64", path, f.Machine)
	}
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", fmt.Errorf("image.ELFDeps: %s: PT_INTERP: %w", path, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	needed, err := f.ImportedLibraries()
	if err != nil {
		return "", fmt.Errorf("image.ELFDeps: %s: DT_NEEDED: %w", path, err)
	}
	for _, lib := range needed {
		found, err := findLib(lib)
		if err != nil {
			return "", fmt.Errorf("image.ELFDeps: %s: %w", path, err)
		}
		if seen[found] {
			continue
		}
		seen[found] = true
		if _, err := elfDeps(found, seen); err != nil {
			return "", err
		}
	}
	return interp, nil
}

func findLib(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil // the loader takes a name with a slash as the path
	}
	for _, dir := range libDirs {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("library %s is in none of %s", name, strings.Join(libDirs, ", "))
}
