// Package sse is the k6/x/sse module: body-level timing of streamed HTTP
// responses (Server-Sent Events and chunked bodies), which k6/http can't give
// because it returns only once the whole body has been read.
package sse

import (
	"fmt"

	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/js/modules"
)

type (
	// RootModule is the global module instance that creates a ModuleInstance
	// for each VU.
	RootModule struct{}

	// ModuleInstance is the module instance of one VU.
	ModuleInstance struct {
		vu      modules.VU
		metrics *instanceMetrics
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
	m, err := registerMetrics(vu.InitEnv().Registry)
	if err != nil {
		common.Throw(vu.Runtime(), fmt.Errorf("failed to register k6/x/sse metrics: %w", err))
	}
	return &ModuleInstance{vu: vu, metrics: m}
}

// Exports implements the modules.Instance interface and returns the exports
// of the JS module.
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"get":    mi.get,
		"stream": mi.stream,
	}}
}
