// Package settings describes every setting a user gives proxybench, once: its name, kind,
// default (per profile where the load profile sets it), the commands that take it, and
// whether it only makes sense on the local stack. `make help`, the CLI's flag usage, the
// environment runner passes to k6, the knob checks (held to scenarios/lib/config.js by a test)
// and SETTINGS.md's table are made from or checked against this table.
package settings

import (
	"slices"
	"strings"
)

// Kind is what a setting's value is.
type Kind string

// The kinds of value.
const (
	Text     Kind = "text"
	Duration Kind = "duration" // a k6 duration: 10s, 1m30s, 500ms
	Count    Kind = "count"    // a whole number of at least 1
	Switch   Kind = "switch"   // 1, true, yes; empty, 0, false, no
	List     Kind = "list"     // all, or a comma-separated list of Values
	Choice   Kind = "choice"   // one of Values
)

// Setting is one variable: `make NAME=…`, `.env` or the environment.
type Setting struct {
	Name   string
	Kind   Kind
	Values []string // List and Choice: what it may be
	// Default is the value when none is given; Profile, when set, names the load profile's
	// field that gives it instead (scenarios/catalogue.json: smoke, stable, stress).
	Default string
	Profile string
	// DefaultIs says what the default is where no one value is (a timestamp).
	DefaultIs string
	// Help says what it does, in one line.
	Help string
	// Commands are the make targets that take it.
	Commands []string
	// Local: it only makes sense against the local stack (its paths, processes or CPUs); a k6
	// elsewhere (k6 cloud, a Kubernetes runner) is not given it.
	Local bool
	// Script: the k6 scripts read it, so every run passes it on (k6 cloud as -e flags).
	Script bool
	// Knob: a scenario knob, which scenarios/lib/config.js checks and CheckKnobs checks alike
	// before anything runs; ZeroOK: 0 is a value (none).
	Knob, ZeroOK bool
}

// All are every setting, in the order `make help` lists them.
func All() []Setting { return slices.Clone(table) }

// Lookup is the setting called name.
func Lookup(name string) (Setting, bool) {
	i := slices.IndexFunc(table, func(s Setting) bool { return s.Name == name })
	if i < 0 {
		return Setting{}, false
	}
	return table[i], true
}

// Names are the settings' names for which keep is true, in table order.
func Names(keep func(Setting) bool) []string {
	var out []string
	for _, s := range table {
		if keep(s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Usage is the setting's help for a flag: what it does, and its variable and default.
func (s Setting) Usage() string {
	u := s.Help + " (" + s.Name
	switch {
	case s.Profile != "":
		u += "; default: the profile's"
	case s.Default != "":
		u += "; default " + s.Default
	case s.DefaultIs != "":
		u += "; default " + s.DefaultIs
	}
	return u + ")"
}

// Takes tells whether the make target cmd takes the setting.
func (s Setting) Takes(cmd string) bool { return slices.Contains(s.Commands, cmd) }

// choices is Values as a|b|c, for help.
func (s Setting) choices() string { return strings.Join(s.Values, "|") }
