package observe

import (
	"fmt"
	"strconv"
	"strings"
)

// The root module has no YAML library (and adding one for two small files isn't worth a
// dependency): parseYAML reads the subset Grafana's provisioning files use — nested block
// maps, block lists of maps, plain or quoted scalars, comments — and rejects anything else
// (flow style, anchors, multi-line scalars, tabs), so a file it accepts is plain YAML.

type yamlLine struct {
	indent int
	text   string
	num    int
}

func parseYAML(src string) (any, error) {
	var lines []yamlLine
	for i, raw := range strings.Split(src, "\n") {
		if strings.Contains(raw, "\t") {
			return nil, fmt.Errorf("line %d: tab", i+1)
		}
		text := stripComment(raw)
		if strings.TrimSpace(text) == "" {
			continue
		}
		trimmed := strings.TrimLeft(text, " ")
		lines = append(lines, yamlLine{indent: len(text) - len(trimmed), text: strings.TrimRight(trimmed, " "), num: i + 1})
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("empty document")
	}
	v, next, err := parseBlock(lines, 0, lines[0].indent)
	if err != nil {
		return nil, err
	}
	if next != len(lines) {
		return nil, fmt.Errorf("line %d: unexpected indentation", lines[next].num)
	}
	return v, nil
}

func stripComment(s string) string {
	inQuote := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '\'' || c == '"':
			inQuote = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return s[:i]
		}
	}
	return s
}

func parseBlock(lines []yamlLine, i, indent int) (any, int, error) {
	if strings.HasPrefix(lines[i].text, "- ") || lines[i].text == "-" {
		var list []any
		for i < len(lines) && lines[i].indent == indent && strings.HasPrefix(lines[i].text, "- ") {
			// the item's first line becomes a line of its own, two columns further in
			lines[i] = yamlLine{indent: indent + 2, text: strings.TrimLeft(lines[i].text[2:], " "), num: lines[i].num}
			v, next, err := parseBlock(lines, i, indent+2)
			if err != nil {
				return nil, 0, err
			}
			list = append(list, v)
			i = next
		}
		return list, i, nil
	}
	m := map[string]any{}
	for i < len(lines) && lines[i].indent == indent {
		l := lines[i]
		key, rest, ok := strings.Cut(l.text, ":")
		if !ok || (rest != "" && rest[0] != ' ') {
			return nil, 0, fmt.Errorf("line %d: not a `key: value` line: %q", l.num, l.text)
		}
		if _, dup := m[key]; dup {
			return nil, 0, fmt.Errorf("line %d: duplicate key %q", l.num, key)
		}
		rest = strings.TrimSpace(rest)
		if rest != "" {
			v, err := scalar(rest)
			if err != nil {
				return nil, 0, fmt.Errorf("line %d: %w", l.num, err)
			}
			m[key] = v
			i++
			continue
		}
		if i+1 >= len(lines) || lines[i+1].indent <= indent {
			m[key] = nil
			i++
			continue
		}
		v, next, err := parseBlock(lines, i+1, lines[i+1].indent)
		if err != nil {
			return nil, 0, err
		}
		m[key] = v
		i = next
	}
	if i < len(lines) && lines[i].indent > indent {
		return nil, 0, fmt.Errorf("line %d: unexpected indentation", lines[i].num)
	}
	return m, i, nil
}

func scalar(s string) (any, error) {
	switch {
	case strings.HasPrefix(s, `"`):
		return strconv.Unquote(s)
	case strings.HasPrefix(s, "'"):
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return nil, fmt.Errorf("unterminated quote: %s", s)
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	case strings.ContainsAny(s[:1], "[{&*!|>"):
		return nil, fmt.Errorf("unsupported YAML (flow style, anchor, tag or block scalar): %s", s)
	case s == "true" || s == "false":
		return s == "true", nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	return s, nil
}
