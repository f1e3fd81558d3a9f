package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// busybox is the static busybox k8s/cluster/install-node.sh unpacks into the install cache.
func busybox(t *testing.T) string {
	cache, err := stack.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(cache, "k8s", "bin", "busybox")
}

// TestImportWithContainerd imports an archive Write made into a containerd of its own, as the
// node's is fed, and runs it.
func TestImportWithContainerd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: containerd and runc need root")
	}
	for _, bin := range []string{"ctr", "containerd"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s: %v", bin, err)
		}
	}
	c := startContainerd(t)

	img := Image{
		Ref:        "proxybench.local/pbimg-test:v1",
		Files:      []File{{Path: "/etc/hello", Data: []byte("hello\n")}, {Path: "/tmp", Dir: true, Mode: 0o1777}},
		Env:        []string{"PATH=/bin"},
		WorkingDir: "/tmp",
	}
	bb := busybox(t)
	_, bbErr := os.Stat(bb)
	if bbErr == nil {
		img.Files = append(img.Files, File{Path: "/bin/busybox", Source: bb}, File{Path: "/bin/sh", Link: "busybox"})
	}
	var archive bytes.Buffer
	digest, err := Write(&archive, img)
	if err != nil {
		t.Fatal(err)
	}
	c.importArchive(t, archive.Bytes())
	// ctr images ls: REF TYPE DIGEST SIZE PLATFORMS LABELS
	if got := c.images(t)[img.Ref]; got != digest {
		t.Fatalf("after import, %s has digest %q, want %s", img.Ref, got, digest)
	}

	t.Run("named by the tag alone without io.containerd.image.name", func(t *testing.T) {
		c.importArchive(t, withoutImageName(t, archive.Bytes(), "tagonly"))
		want := "import-" + time.Now().Format("2006-01-02") + ":tagonly"
		if got := c.images(t)[want]; got != digest {
			t.Errorf("images %v: want %s with digest %s", c.images(t), want, digest)
		}
	})

	t.Run("runs", func(t *testing.T) {
		if bbErr != nil {
			t.Skip("no static busybox to run (bash k8s/cluster/install-node.sh unpacks one):", bbErr)
		}
		id := fmt.Sprintf("pbimg-%d", os.Getpid())
		t.Cleanup(func() { // only if the run failed halfway: --rm removes it
			// each fails when there is nothing to remove, the usual case, and containerd's
			// files go with the test's directory anyway
			_ = exec.Command("ctr", "--address", c.sock, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id).Run()
			_ = exec.Command("ctr", "--address", c.sock, "-n", "k8s.io", "tasks", "rm", "-f", id).Run()
			_ = exec.Command("ctr", "--address", c.sock, "-n", "k8s.io", "containers", "rm", id).Run()
		})
		out := c.ctr(t, "run", "--rm", "--runc-root", filepath.Join(c.dir, "runc"), img.Ref, id,
			"/bin/sh", "-c", "cat /etc/hello; stat -c %a /tmp; pwd")
		if want := "hello\n1777\n/tmp\n"; out != want {
			t.Errorf("the container printed %q, want %q", out, want)
		}
	})
}

type containerd struct {
	dir, sock string
}

// startContainerd starts a containerd with its files in a temporary directory, and stops it
// when the test ends.
func startContainerd(t *testing.T) containerd {
	t.Helper()
	c := containerd{dir: t.TempDir()}
	c.sock = filepath.Join(c.dir, "c.sock")
	// the sockets' paths must fit in a sockaddr_un (108 bytes): with TMPDIR unset, they are
	// about 60 (/tmp/TestImportWithContainerd<n>/001/c.sock.ttrpc)
	if len(c.sock+".ttrpc") >= 108 {
		t.Skipf("containerd's socket %s would be too long for a unix socket: set a shorter GOTMPDIR or TMPDIR", c.sock)
	}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = %q
[ttrpc]
  address = %q
`, filepath.Join(c.dir, "root"), filepath.Join(c.dir, "state"), c.sock, c.sock+".ttrpc")
	configPath := filepath.Join(c.dir, "config.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(c.dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", configPath)
	cmd.Stdout, cmd.Stderr = log, log
	// runc is in /usr/sbin, which a test's PATH may lack
	cmd.Env = append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/sbin:/usr/bin:/sbin:/bin")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error // how containerd exited, once exited is closed
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// fails only when containerd has exited already, which the select sees
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Errorf("killing containerd, which SIGTERM did not stop in 10 s: %v", err)
			} else {
				<-exited
			}
		}
		log.Close()
		unmountUnder(t, c.dir)
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("containerd's log:\n%s", b)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if exec.Command("ctr", "--address", c.sock, "version").Run() == nil {
			return c
		}
		select {
		case <-exited:
			t.Fatalf("containerd exited: %v", waitErr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("containerd did not answer in 30 s")
		}
	}
}

func (c containerd) ctr(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.sock, "-n", "k8s.io"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ctr %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

func (c containerd) importArchive(t *testing.T, archive []byte) {
	t.Helper()
	p := filepath.Join(c.dir, "image.tar")
	if err := os.WriteFile(p, archive, 0o644); err != nil {
		t.Fatal(err)
	}
	c.ctr(t, "images", "import", p)
}

// images returns the digest of each image containerd has.
func (c containerd) images(t *testing.T) map[string]string {
	t.Helper()
	images := map[string]string{}
	s := bufio.NewScanner(strings.NewReader(c.ctr(t, "images", "ls")))
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) >= 3 && f[0] != "REF" {
			images[f[0]] = f[2]
		}
	}
	return images
}

// withoutImageName rewrites the archive's index.json with only the OCI annotation, holding tag.
func withoutImageName(t *testing.T, archive []byte, tag string) []byte {
	t.Helper()
	var out bytes.Buffer
	tr, tw := tar.NewReader(bytes.NewReader(archive)), tar.NewWriter(&out)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == "index.json" {
			var idx index
			unmarshal(t, b, &idx)
			idx.Manifests[0].Annotations = map[string]string{annotationRefName: tag}
			if b, err = json.Marshal(idx); err != nil {
				t.Fatal(err)
			}
			hdr.Size = int64(len(b))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// unmountUnder unmounts what containerd left mounted under dir, so that it can be removed.
func unmountUnder(t *testing.T, dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Error(err)
		return
	}
	var mounts []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			mounts = append(mounts, f[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(mounts))) // the deepest first
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", m, err)
		}
	}
}
