package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testImage has one file of each kind, a directory implied and one given, and a source file.
func testImage(t *testing.T) Image {
	t.Helper()
	src := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho tool\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	return Image{
		Ref: "proxybench.local/test:abc123",
		Files: []File{
			{Path: "/usr/bin/tool", Source: src},
			{Path: "/etc/hello", Data: []byte("hello\n")},
			{Path: "/bin/sh", Link: "busybox"},
			{Path: "/tmp", Dir: true, Mode: 0o1777},
			{Path: "/var/tmp", Dir: true, Mode: fs.ModeSticky | 0o777},
			{Path: "/etc/secret", Data: []byte("s"), Mode: 0o600},
		},
		Entrypoint: []string{"/usr/bin/tool"},
		Env:        []string{"PATH=/usr/bin:/bin"},
		WorkingDir: "/tmp",
	}
}

// readTar returns the files of a tar, and the headers in their order.
func readTar(t *testing.T, r io.Reader) (map[string][]byte, []*tar.Header) {
	t.Helper()
	files := map[string][]byte{}
	var hdrs []*tar.Header
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, hdrs
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name], hdrs = b, append(hdrs, hdr)
	}
}

// blob returns the blob d names, checking its digest and size.
func blob(t *testing.T, files map[string][]byte, d descriptor) []byte {
	t.Helper()
	b, ok := files[blobPath(d)]
	if !ok {
		t.Fatalf("no blob %s", d.Digest)
	}
	sum := sha256.Sum256(b)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != d.Digest || int64(len(b)) != d.Size {
		t.Fatalf("blob %s: digest %s, size %d; descriptor says size %d", d.Digest, got, len(b), d.Size)
	}
	return b
}

func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}

func TestWrite(t *testing.T) {
	var buf bytes.Buffer
	img := testImage(t)
	digest, err := Write(&buf, img)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := readTar(t, &buf)
	if got := string(files["oci-layout"]); got != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %s", got)
	}

	var idx index
	unmarshal(t, files["index.json"], &idx)
	if len(idx.Manifests) != 1 {
		t.Fatalf("index.json has %d manifests, want 1", len(idx.Manifests))
	}
	md := idx.Manifests[0]
	wantAnn := map[string]string{"io.containerd.image.name": img.Ref, "org.opencontainers.image.ref.name": "abc123"}
	if md.Digest != digest || md.MediaType != mediaTypeManifest || !reflect.DeepEqual(md.Annotations, wantAnn) {
		t.Errorf("index.json manifest = %+v, want digest %s and annotations %v", md, digest, wantAnn)
	}
	var m manifest
	unmarshal(t, blob(t, files, md), &m)
	if len(m.Layers) != 1 || m.Layers[0].MediaType != mediaTypeLayer || m.Config.MediaType != mediaTypeConfig {
		t.Fatalf("manifest = %+v", m)
	}
	var cfg imageConfig
	unmarshal(t, blob(t, files, m.Config), &cfg)
	layer := blob(t, files, m.Layers[0])
	wantCfg := imageConfig{platform: platform{"amd64", "linux"}}
	wantCfg.Config.Env, wantCfg.Config.Entrypoint, wantCfg.Config.WorkingDir = img.Env, img.Entrypoint, img.WorkingDir
	wantCfg.RootFS.Type, wantCfg.RootFS.DiffIDs = "layers", []string{m.Layers[0].Digest}
	if !reflect.DeepEqual(cfg, wantCfg) {
		t.Errorf("config = %+v, want %+v", cfg, wantCfg)
	}

	var docker []dockerManifest
	unmarshal(t, files["manifest.json"], &docker)
	wantDocker := []dockerManifest{{blobPath(m.Config), []string{img.Ref}, []string{blobPath(m.Layers[0])}}}
	if !reflect.DeepEqual(docker, wantDocker) {
		t.Errorf("manifest.json = %+v, want %+v", docker, wantDocker)
	}

	type entry struct {
		name string
		kind byte
		mode int64
		data string
	}
	layerFiles, hdrs := readTar(t, bytes.NewReader(layer))
	var got []entry
	for _, h := range hdrs {
		got = append(got, entry{h.Name, h.Typeflag, h.Mode, string(layerFiles[h.Name]) + h.Linkname})
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 0 {
			t.Errorf("%s: uid %d, gid %d, mtime %v; want 0, 0, the epoch", h.Name, h.Uid, h.Gid, h.ModTime)
		}
	}
	want := []entry{
		{"bin/", tar.TypeDir, 0o755, ""},
		{"bin/sh", tar.TypeSymlink, 0o777, "busybox"},
		{"etc/", tar.TypeDir, 0o755, ""},
		{"etc/hello", tar.TypeReg, 0o644, "hello\n"},
		{"etc/secret", tar.TypeReg, 0o600, "s"},
		{"tmp/", tar.TypeDir, 0o1777, ""},
		{"usr/", tar.TypeDir, 0o755, ""},
		{"usr/bin/", tar.TypeDir, 0o755, ""},
		{"usr/bin/tool", tar.TypeReg, 0o750, "#!/bin/sh\necho tool\n"},
		{"var/", tar.TypeDir, 0o755, ""},
		{"var/tmp/", tar.TypeDir, 0o1777, ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("layer holds\n%v\nwant\n%v", got, want)
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	img := testImage(t)
	var first, second bytes.Buffer
	d1, err := Write(&first, img)
	if err != nil {
		t.Fatal(err)
	}
	// the order the files are given in does not matter
	for i, j := 0, len(img.Files)-1; i < j; i, j = i+1, j-1 {
		img.Files[i], img.Files[j] = img.Files[j], img.Files[i]
	}
	d2, err := Write(&second, img)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 || !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("two writes differ: digests %s and %s, %d and %d bytes", d1, d2, first.Len(), second.Len())
	}
}

func TestWriteRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		ref   string
		files []File
		want  string
	}{
		{"no tag", "proxybench.local/k6", nil, "not host/name:tag"},
		{"no host", "k6:v1", nil, "not host/name:tag"},
		{"short name", "library/k6:v1", nil, "no registry host"},
		{"digest", "proxybench.local/k6@sha256:00", nil, "not host/name:tag"},
		{"upper case", "proxybench.local/K6:v1", nil, "bad name or tag"},
		{"relative path", "", []File{{Path: "etc/x"}}, "not absolute and clean"},
		{"unclean path", "", []File{{Path: "/etc/../x"}}, "not absolute and clean"},
		{"root", "", []File{{Path: "/", Dir: true}}, "not absolute and clean"},
		{"twice", "", []File{{Path: "/x"}, {Path: "/x"}}, "given twice"},
		{"two kinds", "", []File{{Path: "/x", Data: []byte("a"), Link: "y"}}, "only one of"},
		{"file as dir", "", []File{{Path: "/x"}, {Path: "/x/y"}}, "/x holds /x/y but is not a directory"},
		{"missing source", "", []File{{Path: "/x", Source: "/nonexistent"}}, "/nonexistent"},
		{"source not a file", "", []File{{Path: "/x", Source: "/"}}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.ref == "" {
				tc.ref = "proxybench.local/k6:v1"
			}
			_, err := Write(io.Discard, Image{Ref: tc.ref, Files: tc.files})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "image.Write") {
				t.Errorf("Write: %v, want an error of image.Write with %q", err, tc.want)
			}
		})
	}
}
