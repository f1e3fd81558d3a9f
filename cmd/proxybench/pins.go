package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/proxybench/proxybench/pins"
	"github.com/proxybench/proxybench/stack"
)

// cmdPins is `make pins`, the canary of every pin (package pins): every target's install
// script and the others resolve their pins against their registries, and it fails when an
// install would take nothing. Here: which scripts, from the stack's configuration.
func cmdPins(ctx context.Context, _ []string) error {
	s, err := newStack()
	if err != nil {
		return err
	}
	var scripts []string
	for _, n := range s.Config.Names() {
		if n == stack.Direct {
			continue
		}
		d, err := stack.LoadDefinition(s.ProxiesDir(), n)
		if err != nil {
			return err
		}
		if d.Install != "" {
			scripts = append(scripts, filepath.Join(d.Dir, d.Install))
		}
	}
	return pins.Check(ctx, pins.Job{
		Root: s.Root, Scripts: append(scripts, pins.Others(s.Root)...), Cache: s.CacheDir,
		Environ: os.Environ(), Out: os.Stdout,
	})
}
