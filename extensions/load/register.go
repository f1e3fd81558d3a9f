package load

import "go.k6.io/k6/v2/js/modules"

// importPath is the name scripts import the module by. No entry of the k6
// extension registry owns it, so a stock k6 never resolves it to another
// extension.
const importPath = "k6/x/proxybench/load"

func init() {
	modules.Register(importPath, New())
}
