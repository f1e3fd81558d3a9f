package ws

import "go.k6.io/k6/v2/js/modules"

// importPath is the name scripts import the module by.
const importPath = "k6/x/proxybench/ws"

func init() {
	modules.Register(importPath, New())
}
