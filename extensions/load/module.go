// Package load is the k6/x/proxybench/load module: a native load loop for the reused, fresh,
// equal-load and idle scenarios and the body-size sweep. One call of run() from a VU's
// iteration sends GET after GET (or upload after upload: POST or PUT with a body of any size, h2
// under the server's flow control, h2send.go) on the VU's kept-alive connection (HTTP/1.1
// cleartext or over TLS, or HTTP/2 with concurrent streams) until a deadline; fresh() sends each
// GET on a connection of its own (fresh.go), open() on a fixed schedule, the open model
// (open.go); idle() opens connections that then stay idle, and held() says which of them the
// server kept (idle.go). Each verifies every answer in Go (status 200, the exact body size, its
// bytes against the expect or expectRepeat option as they are read, the protocol) and emits the
// samples k6/http and scenarios/lib/checks.js would: http_reqs, http_req_duration,
// http_req_waiting, http_req_failed, checks, new_connections, bad_responses{why},
// body_differs_at, body_cut, wrong_proto and late_requests (fresh: http_req_connecting,
// http_req_tls_handshaking, conn_ttfb; open: behind_schedule, start_lag), with k6's tags; run()
// and held() count connections_held, idle() and held() connections_lost{why}.
// What it saves is the JavaScript, the net/http machinery and the goroutine hand-offs around
// every request: per request it costs about what wrk and h2load cost.
package load

import (
	"errors"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/modules"
)

type (
	// RootModule is the global module instance that creates a ModuleInstance for each VU.
	RootModule struct{}

	// ModuleInstance is the module of one VU.
	ModuleInstance struct {
		vu     modules.VU
		custom customMetrics
		err    error // registering the custom metrics failed: client() says so
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

// NewModuleInstance implements the modules.Module interface: it runs in the VU's init
// context, where the registry of metrics is.
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	mi := &ModuleInstance{vu: vu}
	if env := vu.InitEnv(); env != nil {
		mi.custom, mi.err = registerCustom(env.Registry)
	} else {
		mi.err = errors.New("import k6/x/proxybench/load at the top of the script (init context)")
	}
	return mi
}

// Exports implements the modules.Instance interface.
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{"client": mi.client}}
}

// client(options) returns the VU's loop for one URL; see Options.
func (mi *ModuleInstance) client(v sobek.Value) (*Client, error) {
	if mi.err != nil {
		return nil, mi.err
	}
	var o Options
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil, errors.New("client: give the options: { url, proto, expectBytes, expect, check, … }")
	}
	if err := mi.vu.Runtime().ExportTo(v, &o); err != nil {
		return nil, errors.New("client: options: " + err.Error())
	}
	p, err := newPlan(o)
	if err != nil {
		return nil, err
	}
	return &Client{vu: mi.vu, custom: mi.custom, p: p}, nil
}
