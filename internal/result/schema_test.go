package result

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/scenarios"
)

// The Go types are the schema's, field for field, at every level where the schema names the
// fields: a field added to one and not the other fails here, so the schema stays the one
// declaration of the file and Result its one reader.
func TestResultMatchesTheSchema(t *testing.T) {
	t.Parallel()
	var root node
	if err := json.Unmarshal(scenarios.ResultSchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	compare(t, "result", reflect.TypeFor[Result](), &root, root.Defs)
}

// node is the part of a JSON Schema this test walks.
type node struct {
	Ref        string           `json:"$ref"`
	Properties map[string]*node `json:"properties"`
	Items      *node            `json:"items"`
	Defs       map[string]*node `json:"$defs"`
}

func compare(t *testing.T, at string, typ reflect.Type, n *node, defs map[string]*node) {
	t.Helper()
	if n.Ref != "" {
		n = defs[strings.TrimPrefix(n.Ref, "#/$defs/")]
		if n == nil {
			t.Fatalf("%s: $ref to nothing", at)
		}
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ.Kind() == reflect.Slice && n.Items != nil:
		compare(t, at+"[]", typ.Elem(), n.Items, defs)
		return
	case typ.Kind() != reflect.Struct || n.Properties == nil:
		return // a map or a value: the schema says its type, not its fields
	}
	fields := map[string]reflect.Type{}
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		sub, ok := n.Properties[name]
		if !ok {
			t.Errorf("%s.%s: a field of %s the schema does not declare", at, name, typ)
			continue
		}
		compare(t, at+"."+name, fields[name], sub, defs)
	}
	for name := range n.Properties {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s.%s: declared by the schema, not a field of %s", at, name, typ)
		}
	}
}

// What the Go side writes into a result file is the schema's too: a skipped cell (the runner
// writes it whole) and a scenario's result completed by the runner.
func TestValidate(t *testing.T) {
	t.Parallel()
	skipped, err := json.Marshal(&Result{
		Schema: Schema, TestID: "t", Scenario: "reused-h3", Mode: "reused", Target: "nginx", Proto: "h3",
		Invalid: []string{}, Skipped: "no h3", SkipReason: "nginx does not serve h3",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(skipped); err != nil {
		t.Errorf("a skipped cell: %v\n%s", err, skipped)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", `{"schema": 2, "testid": "t", "scenario": "x", "target": "t", "mode": "probe", "skipped": "no h3", "proto": "h3", "requests": 0, "valid": false, "invalid": [], "speed": 1}`, "additional properties 'speed'"},
		{"a figure of the wrong type", `{"schema": 2, "testid": "t", "scenario": "x", "target": "t", "mode": "probe", "skipped": "no h3", "proto": "h3", "requests": "many", "valid": false, "invalid": []}`, "/requests"},
		{"another schema", `{"schema": 1, "testid": "t", "scenario": "x", "target": "t", "mode": "probe", "skipped": "no h3", "proto": "h3", "requests": 0, "valid": false, "invalid": []}`, "/schema"},
		{"a measured run without its counts", `{"schema": 2, "testid": "t", "scenario": "x", "target": "t", "mode": "probe", "proto": "h3"}`, "counts"},
	} {
		if err := Validate([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
