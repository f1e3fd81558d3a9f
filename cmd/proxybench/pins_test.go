package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePins(t *testing.T) {
	out := "install: noise on stdout\n" +
		"pin\tnginx source (Debian trixie)\t1.26.3-3+deb13u7 (sha256)\tindex: 1.26.3-3+deb13u10\t1.26.3-3+deb13u7 (pinned)\n" +
		"pin\ttoo\tfew\tfields\n" +
		"pin\thaproxy source (Debian trixie)\t3.0.11-1+deb13u3 (sha256)\tindex: none\tNOTHING: 404\n"
	rows := parsePins(strings.NewReader(out))
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	if r := rows[0]; r.what != "nginx source (Debian trixie)" || r.pinned != "1.26.3-3+deb13u7 (sha256)" || r.now != "index: 1.26.3-3+deb13u10" || r.broken() {
		t.Errorf("row 0 = %+v", r)
	}
	if !rows[1].broken() {
		t.Errorf("row 1 takes %q: want it broken", rows[1].take)
	}
}

// proxies/arch.sh is the one place the install scripts and docker/base-images.sh take the arch
// from: each name maps to Go's and uname's, and an image built for another arch than the
// machine it runs on is refused, saying which base images to make.
func TestArchNames(t *testing.T) {
	t.Parallel()
	script := filepath.Join("..", "..", "proxies", "arch.sh")
	run := func(env []string, fn string) (string, error) {
		cmd := exec.Command("bash", "-c", `. "$1" && `+fn, "arch", script)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for in, want := range map[string]string{"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"} {
		if got, err := run(nil, "arch_uname_of "+in); err != nil || got != want {
			t.Errorf("arch_uname_of %s = %q, %v; want %s", in, got, err, want)
		}
	}
	machine, err := run(nil, "arch_go")
	if err != nil || (machine != "amd64" && machine != "arm64") {
		t.Skipf("arch_go on this machine: %q, %v", machine, err)
	}
	if got, err := run([]string{"PROXYBENCH_ARCH=" + machine}, "arch_go"); err != nil || got != machine {
		t.Errorf("PROXYBENCH_ARCH=%s arch_go = %q, %v", machine, got, err)
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[machine]
	got, err := run([]string{"PROXYBENCH_ARCH=" + other}, "arch_go")
	if err == nil || !strings.Contains(got, "BASE_ARCH="+other+" docker/base-images.sh") {
		t.Errorf("PROXYBENCH_ARCH=%s on %s: %q, %v; want refused, naming the base images to make", other, machine, got, err)
	}
	if got, err := run([]string{"PROXYBENCH_ARCH=s390x"}, "arch_go"); err == nil || !strings.Contains(got, "give amd64 or arm64") {
		t.Errorf("PROXYBENCH_ARCH=s390x: %q, %v; want refused", got, err)
	}
}
