package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// TestFind: a binary missing is named with the target that builds it; the operator missing is
// ErrNoOperator, which `make k8s-up` and the e2e test tell apart.
func TestFind(t *testing.T) {
	t.Parallel()
	kube := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"}
	tests := []struct {
		name    string
		files   []string
		wantErr string // "" for none
		noOp    bool
	}{
		{"everything", append(kube, "k6-operator/manager"), "", false},
		{"no operator", kube, "K6_OPERATOR_DIR", true},
		{"no scheduler", []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl", "k6-operator/manager"}, "kube-scheduler not built", false},
		{"nothing", nil, "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl not built", false},
	}
	for _, tc := range tests {
		cache := t.TempDir()
		for _, f := range tc.files {
			p := filepath.Join(cache, "k8s", "bin", f)
			if strings.HasPrefix(f, "k6-operator/") {
				p = filepath.Join(cache, "k8s", f)
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		b, err := Find(cache)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.wantErr)
		case errors.Is(err, ErrNoOperator) != tc.noOp:
			t.Errorf("%s: errors.Is(%v, ErrNoOperator) = %v", tc.name, err, !tc.noOp)
		}
		if err == nil && b.CRDs != filepath.Join(cache, "k8s", "k6-operator", "crd") {
			t.Errorf("%s: CRDs in %s", tc.name, b.CRDs)
		}
	}
}

// TestDownStopsByPid: Down stops every component it was given, by pid, and forgets the
// cluster; Load of a folder without one is nil.
func TestDownStopsByPid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Cluster{Dir: dir}
	for _, name := range []string{"first", "second"} {
		p, err := stack.StartProcess([]string{"sleep", "60"}, nil, dir, filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		c.Components = append(c.Components, Component{Name: name, Process: *p})
	}
	if err := c.save(); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil || loaded == nil || !loaded.Alive() {
		t.Fatalf("Load = %+v, %v; want the two running components", loaded, err)
	}
	if err := loaded.Down(); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Components {
		if p.Alive() {
			t.Errorf("%s (pid %d) still runs after Down", p.Name, p.PID)
		}
	}
	if again, err := Load(dir); again != nil || err != nil {
		t.Errorf("Load after Down = %+v, %v; want nothing", again, err)
	}
}

// TestWaitNamesWhatFailed: a component that exits during start-up, or is not ready in time,
// is named with the end of its log.
func TestWaitNamesWhatFailed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notReady := func(context.Context) error { return errors.New("not yet") }
	tests := []struct {
		name string
		argv []string
		want []string
	}{
		{"exits", []string{"sh", "-c", "echo bad flag --foo; exit 1"}, []string{"exits exited during start-up", "bad flag --foo"}},
		{"hangs", []string{"sleep", "60"}, []string{"hangs not ready within", "not yet"}},
	}
	for _, tc := range tests {
		p, err := stack.StartProcess(tc.argv, nil, dir, filepath.Join(dir, tc.name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		err = wait(context.Background(), p, tc.name, time.Second, notReady)
		_ = p.Stop(time.Second)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", tc.name, err, w)
			}
		}
	}
}

func TestLogHas(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "manager.log")
	lines := "INFO\tStarting workers\t{\"controller\": \"privateloadzone\"}\nINFO\tStarting EventSource\t{\"controller\": \"testrun\"}\n"
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	ready := logHas(path, "Starting workers", `"testrun"`)
	if err := ready(context.Background()); err == nil {
		t.Error("two words on two lines count as one line holding both")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("INFO\tStarting workers\t{\"controller\": \"testrun\", \"worker count\": 1}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := ready(context.Background()); err != nil {
		t.Errorf("after the testrun controller's workers started: %v", err)
	}
}

func TestCRDNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: testruns.k6.io\n"
	if err := os.WriteFile(filepath.Join(dir, "testruns.yaml"), []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := crdNames(dir)
	if err != nil || len(names) != 1 || names[0] != "testruns.k6.io" {
		t.Errorf("crdNames = %q, %v", names, err)
	}
	if _, err := crdNames(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no CRD") {
		t.Errorf("an empty folder: %v", err)
	}
}

func TestFreePorts(t *testing.T) {
	t.Parallel()
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Errorf("ports %v: want three different ones", ports)
		}
		seen[p] = true
		if err := stack.CheckPortFree("127.0.0.1", p); err != nil {
			t.Errorf("port %d is not free once returned: %v", p, err)
		}
	}
}
