package main

// The node of `make k8s-up NODE=1`: its programs, and the images its pods run, written here
// (package k8s/image) since no registry is reachable.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/proxybench/proxybench/k8s/cluster"
	"github.com/proxybench/proxybench/k8s/image"
)

// nodeOptions finds what a node runs and writes its images into the install cache: the
// pause image of every pod's sandbox, and the k6 image of the runners, the initializer and
// the starter.
func nodeOptions(cache string) (*cluster.NodeOptions, error) {
	b, err := cluster.FindNode(cache)
	if err != nil {
		return nil, err
	}
	imgs, err := nodeImages(cache)
	if err != nil {
		return nil, err
	}
	return &cluster.NodeOptions{Binaries: b, Images: []string{imgs.pause.archive, imgs.k6.archive}, Pause: imgs.pause.ref}, nil
}

type builtImage struct{ ref, archive string }

type nodeImageSet struct{ pause, k6 builtImage }

// nodeImages are the node's two images. Each is named by a hash of the files it holds, so
// an image of another bin/k6 is another image, never a stale one under the same name.
func nodeImages(cache string) (nodeImageSet, error) {
	root, err := os.Getwd()
	if err != nil {
		return nodeImageSet{}, err
	}
	bin := filepath.Join(root, "bin")
	k6, pause, curl := filepath.Join(bin, "k6"), filepath.Join(bin, "podpause"), filepath.Join(bin, "podcurl")
	busybox := filepath.Join(cache, "k8s", "bin", "busybox")
	for _, p := range []string{k6, pause, curl, busybox} {
		if _, err := os.Stat(p); err != nil {
			return nodeImageSet{}, fmt.Errorf("the node's images need %s: make k8s-up NODE=1 builds it (or: make bin/k6 bin/podpause bin/podcurl; bash k8s/cluster/install-node.sh for busybox)", p)
		}
	}
	dir := filepath.Join(cache, "k8s", "images")
	p, err := writeImage(dir, "pause", image.Image{
		Files:      []image.File{{Path: "/pause", Source: pause, Mode: 0o755}},
		Entrypoint: []string{"/pause"},
	})
	if err != nil {
		return nodeImageSet{}, err
	}
	files := []image.File{
		{Path: "/usr/bin/k6", Source: k6, Mode: 0o755},
		// the starter's curl: busybox has none, and its wget cannot PATCH
		{Path: "/usr/bin/curl", Source: curl, Mode: 0o755},
		{Path: "/bin/busybox", Source: busybox, Mode: 0o755},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
		{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/bin/sh\n")},
		{Path: "/root", Dir: true, Mode: 0o700},
	}
	// the initializer's shell script: sh -c with mkdir, dirname, cat and grep
	for _, tool := range []string{"sh", "cat", "grep", "mkdir", "dirname", "ls", "echo", "sleep", "rm"} {
		files = append(files, image.File{Path: "/bin/" + tool, Link: "busybox"})
	}
	// bin/k6 as it is (the binary the one-host run uses), with the libraries it loads
	deps, err := image.ELFDeps(k6)
	if err != nil {
		return nodeImageSet{}, err
	}
	for _, d := range deps {
		files = append(files, image.File{Path: d, Source: d})
	}
	k, err := writeImage(dir, "k6", image.Image{Files: files, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root"}})
	if err != nil {
		return nodeImageSet{}, err
	}
	return nodeImageSet{pause: p, k6: k}, nil
}

// writeImage writes img as dir/<name>-<tag>.tar, named proxybench.local/<name>:<tag> where the
// tag is a hash of its files; one already written is kept.
func writeImage(dir, name string, img image.Image) (builtImage, error) {
	h := sha256.New()
	for _, f := range img.Files {
		fmt.Fprintf(h, "%s %o %s %q %v\n", f.Path, f.Mode, f.Link, f.Data, f.Dir)
		if f.Source != "" {
			src, err := os.Open(f.Source)
			if err != nil {
				return builtImage{}, fmt.Errorf("image %s: %w", name, err)
			}
			_, err = io.Copy(h, src)
			src.Close()
			if err != nil {
				return builtImage{}, fmt.Errorf("image %s: %w", name, err)
			}
		}
	}
	fmt.Fprintf(h, "%q %q\n", img.Entrypoint, img.Env)
	// the archive's format: bump it when k8s/image writes another, or an old archive stays in use
	fmt.Fprintln(h, "k8s/image 1")
	tag := hex.EncodeToString(h.Sum(nil))[:12]
	b := builtImage{ref: "proxybench.local/" + name + ":" + tag, archive: filepath.Join(dir, name+"-"+tag+".tar")}
	if _, err := os.Stat(b.archive); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return b, err
	}
	img.Ref = b.ref
	tmp, err := os.CreateTemp(dir, name+"-*.tmp")
	if err != nil {
		return b, err
	}
	defer os.Remove(tmp.Name())
	if _, err := image.Write(tmp, img); err != nil {
		tmp.Close()
		return b, fmt.Errorf("image %s: %w", b.ref, err)
	}
	if err := tmp.Close(); err != nil {
		return b, err
	}
	return b, os.Rename(tmp.Name(), b.archive)
}
