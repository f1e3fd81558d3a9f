package k8s

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Job is one `make k8s` on this machine: the settings, the script they run and where the
// files go.
type Job struct {
	Settings
	K6 K6
	// Script is the scenario's script (the runner's choice for the client and the split);
	// ScenariosDir is the folder of scripts, which the ConfigMap's head names it from.
	Script, ScenariosDir string
	// Dir receives configmap.yaml, testrun.yaml and archive.tar.
	Dir string
	// Env is the runners' env (Settings.RunnerEnv).
	Env []EnvVar
}

// Written is what Write made.
type Written struct {
	Name         string // the ConfigMap's and the TestRun's
	MaxVUs       int    // k6 inspect's
	ArchiveBytes int
}

// Write archives the scenario into j.Dir, checks the archive as the operator's initializer
// will, and writes the ConfigMap and TestRun beside it. On an error a Dir it made is removed,
// so that no half-made folder is there for kubectl apply -f.
func Write(ctx context.Context, j Job) (*Written, error) {
	_, statErr := os.Stat(j.Dir)
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return nil, err
	}
	w, err := j.write(ctx)
	if err != nil && os.IsNotExist(statErr) {
		_ = os.RemoveAll(j.Dir)
	}
	return w, err
}

func (j Job) write(ctx context.Context) (*Written, error) {
	archive, in, err := j.K6.archiveAndInspect(ctx, j.Script, filepath.Join(j.Dir, archiveKey), j.Env)
	if err != nil {
		return nil, err
	}
	m, err := build(j.Settings, archive, in, j.Env)
	if err != nil {
		return nil, err
	}
	for _, doc := range []struct {
		file string
		v    any
		head string
	}{
		{"configmap.yaml", m.ConfigMap, fmt.Sprintf("the k6 archive of %s (bin/k6 archive), for the TestRun of testrun.yaml", relTo(j.ScenariosDir, j.Script))},
		{"testrun.yaml", m.TestRun, fmt.Sprintf("%s against %s, split %d ways on the k6-operator (TestRun %s, operator %s)", j.Cell(), j.TargetURL, j.Parallelism, testRunAPI, operatorVersion)},
	} {
		data, err := toYAML(doc.v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doc.file, err)
		}
		head := "# Made by `make k8s` (proxybench k8s): " + doc.head + ".\n# kubectl apply -f " + j.Dir + "/  (k8s/README.md)\n"
		if err := os.WriteFile(filepath.Join(j.Dir, doc.file), append([]byte(head), data...), 0o644); err != nil {
			return nil, err
		}
	}
	return &Written{Name: m.TestRun.Metadata.Name, MaxVUs: in.MaxVUs, ArchiveBytes: len(archive)}, nil
}

// toYAML writes v as block YAML in its fields' order, indented as Kubernetes' own examples
// are. The library quotes every string YAML would read as something else (yes, 0755, "- x").
func toYAML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// relTo is path under dir as scenarios/… names it, or path itself.
func relTo(dir, path string) string {
	if rel, err := filepath.Rel(filepath.Dir(dir), path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
