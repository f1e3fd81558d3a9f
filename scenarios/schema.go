package scenarios

import _ "embed"

// ResultSchemaJSON is result.schema.json: the one declaration of the result file a scenario
// writes (lib/summary.js) and the Go side reads (internal/result), its version included.
//
//go:embed result.schema.json
var ResultSchemaJSON []byte
