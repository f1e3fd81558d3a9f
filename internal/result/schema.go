package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/proxybench/proxybench/scenarios"
)

// Schema is the version of the result files this proxybench writes and reads: the `const` of
// scenarios/result.schema.json's `schema` property, the one place it is written (summary.js
// reads it there too). An older file is converted to it as it is read (convert.go).
var Schema = func() int {
	var doc struct {
		Properties struct {
			Schema struct {
				Const int `json:"const"`
			} `json:"schema"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(scenarios.ResultSchemaJSON, &doc); err != nil || doc.Properties.Schema.Const < 1 {
		panic(fmt.Sprintf("scenarios/result.schema.json: no properties.schema.const (%v)", err))
	}
	return doc.Properties.Schema.Const
}()

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(scenarios.ResultSchemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("result.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("result.schema.json")
})

// Validate holds a result file's JSON to scenarios/result.schema.json: the tests hold every file
// the scripts and the runner write to it.
func Validate(data []byte) error {
	s, err := compiled()
	if err != nil {
		return fmt.Errorf("scenarios/result.schema.json: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}
