package cloud

import (
	"context"
	"io"
	"os/exec"
	"slices"
)

// offlineEnv keeps k6 off the internet but for k6 cloud itself: no usage report, and no
// extension fetched for a script that imports one bin/k6 lacks.
var offlineEnv = []string{"K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false"}

// K6 is the k6 binary run here and what it is given.
type K6 struct {
	Path string
	// Environ is this machine's environment (os.Environ()): k6's own process runs in it, and a
	// cloud run is given the script's variables of it as -e flags (runArgs).
	Environ []string
	// Stdout and Stderr receive `k6 cloud run`'s output, the link to the run included.
	Stdout, Stderr io.Writer
}

func (k K6) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.Path, args...)
	// Concat, not append: Environ stays the caller's, whatever its capacity
	cmd.Env = slices.Concat(k.Environ, offlineEnv)
	return cmd
}
