package pins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// scriptTimeout bounds one install script in pins mode, which resolves and downloads but builds
// nothing: a registry that hangs fails its script, not `make pins`.
const scriptTimeout = 5 * time.Minute

// Others are the install scripts under root of what is not a target: each answers
// PROXYBENCH_PINS=1 with its rows, as the targets' own do (docker/base-images.sh: the image's
// Go toolchain, each arch's).
func Others(root string) []string {
	var scripts []string
	for _, p := range []string{"observe/install-influxdb.sh", "report/install-chromium.sh", "docker/install.sh", "docker/base-images.sh", "lint/install.sh", "k8s/cluster/install.sh", "k8s/cluster/install-node.sh", "k8s/cluster/install-operator.sh"} {
		scripts = append(scripts, filepath.Join(root, p))
	}
	return scripts
}

// ofScript runs one install script in pins mode, in its own folder and in environ, with cache
// as its download cache, and parses its rows. A script that fails keeps the rows it printed.
func ofScript(ctx context.Context, script, cache string, environ []string) ([]Row, error) {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = slices.Concat(environ, []string{"PROXYBENCH_PINS=1", "PROXYBENCH_CACHE=" + cache})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	rows := Parse(bytes.NewReader(out))
	if err != nil {
		return rows, fmt.Errorf("%w: %s", err, stack.LastLines(stderr.String(), 5))
	}
	if len(rows) == 0 {
		return nil, errors.New("printed no pin rows")
	}
	return rows, nil
}
