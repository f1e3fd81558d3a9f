// Package http3 is the k6/x/proxybench/http3 module: an HTTP/3 (QUIC) client for k6
// scripts, shaped like k6/http (request, get, post, put, del, batch, …),
// honouring the same k6 options (hosts, insecureSkipTLSVerify,
// noConnectionReuse, noVUConnectionReuse, tlsVersion, …) and emitting k6's
// standard HTTP metrics with proto=HTTP/3.0, so summaries, thresholds and
// dashboards treat HTTP/3 like HTTP/1.1 and HTTP/2.
//
// Requests go through k6's own request code (httpext.MakeRequest): the module
// provides the transport, quic-go's http3.Transport, dialled per VU.
package http3

import (
	"context"
	"slices"

	"go.k6.io/k6/v2/js/modules"
)

type (
	// RootModule is the global module instance that creates a ModuleInstance
	// for each VU.
	RootModule struct{}

	// ModuleInstance is the module instance of one VU, with its connections.
	ModuleInstance struct {
		vu   modules.VU
		pool *pool
		// creationEnded is closed once the end of the context the VU was
		// created with has been acted on (its connections closed or kept)
		creationEnded chan struct{}
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
	mi := &ModuleInstance{vu: vu, pool: newPool(), creationEnded: make(chan struct{})}
	mi.closeWhenDone()
	return mi
}

// Exports implements the modules.Instance interface and returns the exports
// of the JS module.
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: mi.methods()}
}

// closeWhenDone closes the VU's QUIC connections cleanly (H3_NO_ERROR) when
// the VU is done with them:
//
//   - when the context the VU was created with ends, if the VU made its
//     requests in it: the end of setup(), teardown() and handleSummary() for
//     their VUs;
//   - at the end of the test (k6's TestEnd event, and Exit in case TestEnd
//     never comes), for the VUs that ran the scenarios: their creation
//     context ends right after initialization, and the VU context during an
//     iteration lasts one iteration only.
//
// Closing only closes: it touches no sample channel, so it can't panic
// however many VUs end at once.
func (mi *ModuleInstance) closeWhenDone() {
	if ctx := mi.vu.Context(); ctx != nil {
		context.AfterFunc(ctx, func() {
			mi.pool.closeIfUsedIn(ctx)
			close(mi.creationEnded)
		})
	}
	subscriber := mi.vu.Events().Global
	if subscriber == nil {
		return
	}
	types := eventTypes(subscriber.Subscribe, "TestEnd", "Exit")
	if len(types) == 0 {
		return
	}
	_, events := subscriber.Subscribe(types...)
	go func() {
		// the channel is closed by k6 when it unsubscribes everyone, at exit
		for ev := range events {
			mi.pool.closeAll()
			if ev.Done != nil {
				ev.Done()
			}
		}
	}()
}

// eventTypes returns the k6 event types with the given names. k6 defines them
// in an internal package (go.k6.io/k6/v2/internal/event), which extensions
// can't import: the type comes from the Subscribe method's own signature and
// the values are found by their names, so no number is hard-coded.
func eventTypes[T interface {
	~uint8
	String() string
}, C any](_ func(...T) (uint64, C), names ...string) []T {
	var types []T
	for i := 1; i <= 255; i++ {
		if t := T(i); slices.Contains(names, t.String()) {
			types = append(types, t)
		}
	}
	return types
}
