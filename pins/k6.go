package pins

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// k6Module is the k6 the extensions build on.
const k6Module = "go.k6.io/k6/v2"

// k6Row is the row of k6Module: a Go module, immutable by version, that the Go module proxy
// serves by exact version only. Its pin is in root's extensions/go.mod, not in an install
// script, so it is checked here, run in environ.
func k6Row(ctx context.Context, root string, environ []string) Row {
	row := Row{What: k6Module + " (Go module, extensions/go.mod)", Now: "immutable by version (go.sum)"}
	data, err := os.ReadFile(filepath.Join(root, "extensions", "go.mod"))
	if err != nil {
		row.Take = "NOTHING: " + err.Error()
		return row
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == k6Module {
			row.Pinned = f[1]
		}
	}
	if row.Pinned == "" {
		row.Take = "NOTHING: extensions/go.mod requires no " + k6Module
		return row
	}
	// the check the Go-built installs make (proxies/pins.sh), so that there is one
	cmd := exec.CommandContext(ctx, "bash", "-c", `. "$1" && pins_go_module "$2" "$3"`, "pins",
		filepath.Join(root, "proxies", "pins.sh"), k6Module, row.Pinned)
	cmd.Env = environ
	out, err := cmd.Output()
	rows := Parse(bytes.NewReader(out))
	if err != nil || len(rows) != 1 {
		row.Take = fmt.Sprintf("NOTHING: proxies/pins.sh pins_go_module: %v", err)
		return row
	}
	row.Take = rows[0].Take
	return row
}
