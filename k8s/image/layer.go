package image

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// File is an entry of the image's layer: a regular file (Source or Data, both empty for an
// empty file), a symlink (Link) or a directory (Dir). The directories of the paths that are not
// given are written with mode 0755.
type File struct {
	Path string // absolute and clean: "/usr/bin/k6"
	// Mode holds the permission bits, 0 for the defaults: Source's own, 0644 for Data, 0755 for
	// a directory. Setuid, setgid and sticky may be given as fs.ModeSetuid, … or as Unix writes
	// them: fs.FileMode leaves its bits 0o7000 unused, so 0o1777 makes /tmp.
	Mode   fs.FileMode
	Source string // a file of this machine to copy; a symlink is followed
	Data   []byte
	Link   string // the symlink's target
	Dir    bool
}

// layerEntries checks files, adds the directories they imply and sorts them: every directory
// comes before what it holds, in one order for the same files.
func layerEntries(files []File) ([]File, error) {
	byPath := make(map[string]File, len(files))
	for _, f := range files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, fmt.Errorf("image.Write: file path %q is not absolute and clean", f.Path)
		}
		kinds := 0
		for _, set := range []bool{f.Source != "", f.Data != nil, f.Link != "", f.Dir} {
			if set {
				kinds++
			}
		}
		if kinds > 1 {
			return nil, fmt.Errorf("image.Write: file %s: give only one of Source, Data, Link and Dir", f.Path)
		}
		if _, dup := byPath[f.Path]; dup {
			return nil, fmt.Errorf("image.Write: file %s is given twice", f.Path)
		}
		byPath[f.Path] = f
	}
	for _, f := range files {
		for dir := path.Dir(f.Path); dir != "/"; dir = path.Dir(dir) {
			d, ok := byPath[dir]
			if ok && !d.Dir {
				return nil, fmt.Errorf("image.Write: %s holds %s but is not a directory", dir, f.Path)
			}
			if !ok {
				byPath[dir] = File{Path: dir, Dir: true}
			}
		}
	}
	entries := make([]File, 0, len(byPath))
	for _, f := range byPath {
		entries = append(entries, f)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return entries, nil
}

// writeLayer writes entries to f as a tar, describes what it wrote, and rewinds f.
func writeLayer(f *os.File, entries []File) (descriptor, error) {
	sum := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(f, sum))
	for _, e := range entries {
		if err := writeFile(tw, e); err != nil {
			return descriptor{}, fmt.Errorf("layer file %s: %w", e.Path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return descriptor{}, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	return descriptor{MediaType: mediaTypeLayer, Digest: "sha256:" + hex.EncodeToString(sum.Sum(nil)), Size: size}, err
}

func writeFile(tw *tar.Writer, f File) error {
	hdr := header(strings.TrimPrefix(f.Path, "/"))
	mode := f.Mode
	switch {
	case f.Dir:
		hdr.Name += "/"
		hdr.Typeflag = tar.TypeDir
		mode = or(mode, 0o755)
	case f.Link != "":
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
		mode = 0o777 // Linux ignores a symlink's mode
	case f.Source != "":
		src, err := os.Open(f.Source)
		if err != nil {
			return err
		}
		defer src.Close()
		// the size and mode of the file opened, not of what the path may name later
		info, err := src.Stat()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("source %s is not a regular file", f.Source)
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, unixMode(or(mode, info.Mode().Perm())), info.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.CopyN(tw, src, info.Size()); err != nil {
			return fmt.Errorf("source %s changed while read: %w", f.Source, err)
		}
		return nil
	default:
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
		mode = or(mode, 0o644)
	}
	hdr.Mode = unixMode(mode)
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := tw.Write(f.Data)
	return err
}

// header is an entry owned by root, of no time: what varies between two writes of the same
// files stays out of the bytes.
func header(name string) *tar.Header {
	return &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, ModTime: time.Unix(0, 0)}
}

func or(mode, otherwise fs.FileMode) fs.FileMode {
	if mode == 0 {
		return otherwise
	}
	return mode
}

// unixMode is mode as a tar header holds it.
func unixMode(mode fs.FileMode) int64 {
	m := int64(mode & 0o7777)
	for goBit, unixBit := range map[fs.FileMode]int64{fs.ModeSetuid: 0o4000, fs.ModeSetgid: 0o2000, fs.ModeSticky: 0o1000} {
		if mode&goBit != 0 {
			m |= unixBit
		}
	}
	return m
}
