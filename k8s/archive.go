package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// offlineEnv keeps every k6 here and on the runners off the internet.
var offlineEnv = []EnvVar{{Name: "K6_NO_USAGE_REPORT", Value: "true"}, {Name: "K6_AUTO_EXTENSION_RESOLUTION", Value: "false"}}

// K6 is the k6 binary run here, to archive the scenario and inspect the archive.
type K6 struct {
	Path string
	// Env is its environment before offlineEnv: only what finds programs and k6's own files
	// (PATH, HOME), so that nothing else of this machine reaches the archive.
	Env []string
	// Elsewhere is a directory with nothing of this clone, where the archive is inspected.
	Elsewhere string
}

// archiveAndInspect runs `k6 archive` with env as -e, as the runners will run it, then
// `k6 inspect --execution-requirements` on the archive from another directory, as the
// operator's initializer does in the cluster: a script that cannot run there stops here.
func (k K6) archiveAndInspect(ctx context.Context, scriptPath, archivePath string, env []EnvVar) ([]byte, inspected, error) {
	args := []string{"archive"}
	for _, e := range env {
		args = append(args, "-e", e.Name+"="+e.Value)
	}
	args = append(args, "-O", archivePath, scriptPath)
	if _, err := k.run(ctx, "", args...); err != nil {
		return nil, inspected{}, fmt.Errorf("k6 archive %s: %w", filepath.Base(scriptPath), err)
	}
	archive, err := os.ReadFile(archivePath)
	if err != nil {
		return nil, inspected{}, err
	}
	// the archive must stand alone: nothing of this clone is at hand in a pod
	out, err := k.run(ctx, k.Elsewhere, "inspect", "--execution-requirements", archivePath)
	if err != nil {
		return nil, inspected{}, fmt.Errorf("k6 inspect --execution-requirements of the archive: %w", err)
	}
	var in inspected
	if err := json.Unmarshal(out, &in); err != nil {
		return nil, inspected{}, fmt.Errorf("k6 inspect --execution-requirements of the archive printed no JSON: %w", err)
	}
	return archive, in, nil
}

// run runs k6 offline, its environment cleared of what could make it reach out or read this
// machine's files instead of the archive's.
func (k K6) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, k.Path, args...)
	cmd.Dir = dir
	cmd.Env = slices.Clone(k.Env) // appended to below: not the caller's array
	for _, e := range offlineEnv {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, k6Message(stderr.String()))
	}
	return stdout.Bytes(), nil
}

var k6ErrorRE = regexp.MustCompile(`level=error msg=("(?:[^"\\]|\\.)*")`)

// k6Message is what k6's log says went wrong: the script's own message (scenarios/lib throws
// ones that say what to do), without the logfmt quoting and the JavaScript stack under it.
func k6Message(stderr string) string {
	var msgs []string
	for _, m := range k6ErrorRE.FindAllStringSubmatch(stderr, -1) {
		msg, err := strconv.Unquote(m[1])
		if err != nil {
			continue
		}
		msg, _, _ = strings.Cut(msg, "\n\tat ")
		msgs = append(msgs, strings.TrimPrefix(strings.TrimSpace(msg), "Error: "))
	}
	if len(msgs) == 0 {
		return strings.TrimSpace(stderr)
	}
	return strings.Join(msgs, "; ")
}
