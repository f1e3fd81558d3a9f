package pins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// Job is one `make pins`.
type Job struct {
	// Root is the repository's root: extensions/go.mod and proxies/pins.sh are under it, and
	// errors name scripts relative to it.
	Root string
	// Scripts are the install scripts to run in pins mode: the targets' and Others.
	Scripts []string
	// Cache is PROXYBENCH_CACHE, where a script keeps what it verified.
	Cache string
	// Environ is the scripts' environment.
	Environ []string
	// Out receives the table.
	Out io.Writer
}

// Check runs every script of j in pins mode, adds k6's row and prints the table to j.Out,
// whatever failed. The error says every script that failed and every pin an install would take
// nothing for.
func Check(ctx context.Context, j Job) error {
	var rows []Row
	var errs []error
	for _, script := range j.Scripts {
		got, err := ofScript(ctx, script, j.Cache, j.Environ)
		rows = append(rows, got...)
		if err != nil {
			rel, _ := filepath.Rel(j.Root, script)
			errs = append(errs, fmt.Errorf("%s: %w", rel, err))
		}
	}
	rows = append(rows, k6Row(ctx, j.Root, j.Environ))
	Print(j.Out, rows)
	for _, r := range rows {
		if r.Broken() {
			errs = append(errs, fmt.Errorf("%s: an install would take nothing: %s", r.What, r.Take))
		}
	}
	return errors.Join(errs...)
}
