package settings

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/proxybench/proxybench/scenarios"
)

// ProfileDefault is the setting's default in each load profile ("smoke 10s, stable 30s,
// stress 30s"), or its Default when the profiles do not set it.
func (s Setting) ProfileDefault() string {
	if s.Profile == "" {
		return s.Default + s.DefaultIs
	}
	var parts []string
	for _, name := range scenarios.ProfileNames() {
		p, _ := scenarios.ProfileNamed(name)
		var fields map[string]any
		data, _ := json.Marshal(p)
		_ = json.Unmarshal(data, &fields)
		parts = append(parts, fmt.Sprintf("%s %v", name, fields[s.Profile]))
	}
	return strings.Join(parts, ", ")
}

// value is how help shows what the setting takes.
func (s Setting) value() string {
	switch s.Kind {
	case Choice:
		return s.choices()
	case List:
		return "all|" + strings.Join(s.Values, ",")
	case Switch:
		return "1"
	case Count:
		return "N"
	case Duration:
		return "10s"
	}
	return "…"
}

// WriteHelp writes every setting for `make help`: NAME=value, what it does, its default and
// the make targets that take it.
func WriteHelp(w io.Writer) error {
	for _, s := range table {
		line := fmt.Sprintf("  %-34s %s", s.Name+"="+s.value(), s.Help)
		if d := s.ProfileDefault(); d != "" {
			line += "; default " + d
		}
		if _, err := fmt.Fprintf(w, "%s  [%s]\n", line, strings.Join(s.Commands, " ")); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown writes the settings as SETTINGS.md's table.
func WriteMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintln(w, "| setting | default | make targets | what it does |\n|---|---|---|---|"); err != nil {
		return err
	}
	for _, s := range table {
		d := s.ProfileDefault()
		if d == "" {
			d = "–"
		}
		what := s.Help
		if s.Kind == Choice || s.Kind == List {
			what += ": " + strings.Join(s.Values, ", ") // a | would end the cell
		}
		if s.Local {
			what += " (local stack only)"
		}
		if _, err := fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", s.Name, d, strings.Join(s.Commands, ", "), what); err != nil {
			return err
		}
	}
	return nil
}
