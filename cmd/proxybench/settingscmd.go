package main

import (
	"context"
	"flag"
	"os"

	"github.com/proxybench/proxybench/settings"
)

// cmdSettings prints every setting from its one description (package settings): the list
// `make help` shows, or with -markdown SETTINGS.md's table.
func cmdSettings(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("settings", flag.ContinueOnError)
	md := fs.Bool("markdown", false, "SETTINGS.md's table instead of make help's list")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *md {
		return settings.WriteMarkdown(os.Stdout)
	}
	return settings.WriteHelp(os.Stdout)
}

// settingVar defines the flag that takes setting name: from the environment by default, else
// the setting's default (or def, when given: a command's own), with the setting's description
// as its usage.
func settingVar(fs *flag.FlagSet, p *string, flagName, name, def string) {
	s, ok := settings.Lookup(name)
	if !ok {
		panic("settingVar: no setting " + name + " in settings/table.go")
	}
	if def == "" {
		def = s.Default
	}
	fs.StringVar(p, flagName, envOr(name, def), s.Usage())
}

// setting is settingVar into a new string.
func setting(fs *flag.FlagSet, flagName, name, def string) *string {
	p := new(string)
	settingVar(fs, p, flagName, name, def)
	return p
}
