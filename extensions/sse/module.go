// Package sse is the k6/x/proxybench/sse module: body-level timing of streamed HTTP
// responses (Server-Sent Events and chunked bodies), which k6/http can't give
// because it returns only once the whole body has been read.
package sse

import (
	"fmt"

	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/js/modules"

	"github.com/proxybench/proxybench/extensions/http3"
)

type (
	// RootModule is the global module instance that creates a ModuleInstance
	// for each VU.
	RootModule struct{}

	// ModuleInstance is the module instance of one VU.
	ModuleInstance struct {
		vu      modules.VU
		metrics *instanceMetrics
		// h3 is the VU's own k6/x/proxybench/http3 instance, whose QUIC connections carry the
		// calls made with the http3 param. It is made with the VU, as k6 makes
		// module instances, so that its connections close when the VU is done.
		h3 *http3.ModuleInstance
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
		common.Throw(vu.Runtime(), fmt.Errorf("failed to register k6/x/proxybench/sse metrics: %w", err))
	}
	h3, ok := http3.New().NewModuleInstance(vu).(*http3.ModuleInstance)
	if !ok {
		common.Throw(vu.Runtime(), fmt.Errorf("k6/x/proxybench/sse: k6/x/proxybench/http3 gave no *http3.ModuleInstance"))
	}
	return &ModuleInstance{vu: vu, metrics: m, h3: h3}
}

// Exports implements the modules.Instance interface and returns the exports
// of the JS module.
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"get":    mi.get,
		"stream": mi.stream,
	}}
}
