package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// toYAML writes v as block YAML, in its JSON field order. It goes through JSON so that the
// json tags rule both forms, and keeps every scalar in its JSON form: a JSON string is a YAML
// double-quoted scalar with the same value, and JSON numbers, true, false and null read the
// same in YAML, so no YAML quoting rule (yes, no, 0755, "- ", ": ") can change a value. The
// root module has no YAML library of its own, and these manifests need none.
func toYAML(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if n.object == nil {
		return nil, errors.New("toYAML: the document is not a JSON object")
	}
	var b strings.Builder
	writeNode(&b, n, 0)
	return []byte(b.String()), nil
}

// node is a JSON value with its object keys in order.
type node struct {
	scalar string // JSON text of a string, number, boolean or null
	object []field
	array  []*node
	isArr  bool
}

type field struct {
	key string
	val *node
}

func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{}
		switch t {
		case '{':
			n.object = []field{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.object = append(n.object, field{k.(string), v})
			}
		case '[':
			n.isArr = true
			for dec.More() {
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.array = append(n.array, v)
			}
		}
		if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return n, nil
	default:
		s, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		return &node{scalar: string(s)}, nil
	}
}

// inline is a node written on its key's line: a scalar, {} or [].
func (n *node) inline() (string, bool) {
	switch {
	case n.isArr && len(n.array) == 0:
		return "[]", true
	case n.isArr:
		return "", false
	case n.object != nil && len(n.object) == 0:
		return "{}", true
	case n.object != nil:
		return "", false
	}
	return n.scalar, true
}

// plainKeyRE is a key YAML reads as the same string unquoted; yamlWords are those it would
// read as something else (YAML 1.1 booleans, null).
var (
	plainKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)
	yamlWords  = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true, "true": true, "false": true, "null": true}
)

func yamlKey(k string) string {
	if plainKeyRE.MatchString(k) && !yamlWords[strings.ToLower(k)] {
		return k
	}
	q, _ := json.Marshal(k)
	return string(q)
}

// writeNode writes an object's fields or an array's items at indent.
func writeNode(b *strings.Builder, n *node, indent int) {
	pad := strings.Repeat(" ", indent)
	if n.isArr {
		for _, item := range n.array {
			if s, ok := item.inline(); ok {
				fmt.Fprintf(b, "%s- %s\n", pad, s)
				continue
			}
			// the item's first line goes after "- ", the rest under it
			var sub strings.Builder
			writeNode(&sub, item, indent+2)
			b.WriteString(pad + "- " + strings.TrimPrefix(sub.String(), pad+"  "))
		}
		return
	}
	for _, f := range n.object {
		if s, ok := f.val.inline(); ok {
			fmt.Fprintf(b, "%s%s: %s\n", pad, yamlKey(f.key), s)
			continue
		}
		fmt.Fprintf(b, "%s%s:\n", pad, yamlKey(f.key))
		writeNode(b, f.val, indent+2)
	}
}
