package result

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"github.com/proxybench/proxybench/stack"
)

// UpstreamConns is how many connections the upstream accepted while a run went on: behind a
// proxy, the proxy's upstream connections; for direct, the client's own. Reused cells should
// open next to none once warm; a proxy whose upstream pool is smaller than the requests it has
// in flight opens and closes one for about every request it forwards, and measures its pool
// policy instead of its proxying.
type UpstreamConns struct {
	Opened   float64 `json:"opened"`
	Requests float64 `json:"requests"` // every request k6 sent (AllRequests): the counter spans the whole run
	Per1k    float64 `json:"per_1k_requests"`
}

// AddToFile adds fields to the result file at path, beside what k6 wrote (replaced atomically),
// so that a report rebuilt from the files alone has them too.
func AddToFile(path string, fields map[string]any) error {
	return PatchJSON(path, path, nil, fields)
}

// PatchJSON writes to dst the JSON object of src without the keys of drop and with fields set
// over it (a nil one removed), every other key kept as it was.
func PatchJSON(src, dst string, drop []string, fields map[string]any) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("parse %s: %w", src, err)
	}
	for _, k := range drop {
		delete(doc, k)
	}
	for k, v := range fields {
		if isNil(v) {
			// absent, as the schema has it: an optional figure is left out, never null
			delete(doc, k)
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		doc[k] = raw
	}
	return stack.WriteJSON(dst, doc)
}

// isNil tells a nil pointer, map or slice (a figure not measured) from a value.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		return rv.IsNil()
	}
	return false
}
