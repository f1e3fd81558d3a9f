// Package ws is the k6/x/proxybench/ws module: one WebSocket echo session (upgrade, the
// server's first message, one message and its echo, close) that ends within its timeout
// whatever the server does. k6's own clients cannot bound it: k6/websockets and k6/ws give the
// upgrade a fixed 60 s, k6/websockets' close() on a socket still connecting blocks the event
// loop for good, and an upgraded socket whose server never answers the close stays open.
package ws

import (
	"go.k6.io/k6/v2/js/modules"
)

type (
	// RootModule is the global module instance that creates a ModuleInstance
	// for each VU.
	RootModule struct{}

	// ModuleInstance is the module instance of one VU.
	ModuleInstance struct {
		vu modules.VU
	}
)

var (
	_ modules.Module   = &RootModule{}
	_ modules.Instance = &ModuleInstance{}
)

// New returns a pointer to a new RootModule instance.
func New() *RootModule {
	return &RootModule{}
}

// NewModuleInstance implements the modules.Module interface to return a new
// instance for each VU.
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	return &ModuleInstance{vu: vu}
}

// Exports implements the modules.Instance interface and returns the exports
// of the JS module.
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"echo": mi.echo,
	}}
}
