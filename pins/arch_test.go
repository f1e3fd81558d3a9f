package pins

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// proxies/arch.sh is the one place the install scripts and docker/base-images.sh take the arch
// from: each name maps to Go's and uname's, and an image built for another arch than the
// machine it runs on is refused, saying which base images to make.
func TestArchNames(t *testing.T) {
	t.Parallel()
	script := filepath.Join("..", "proxies", "arch.sh")
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
