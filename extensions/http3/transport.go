package http3

import (
	"context"
	"net/http"

	"go.k6.io/k6/v2/lib"
)

// RoundTripper is the VU's HTTP/3 transport, for the other modules of this repository that
// make their requests through k6's httpext themselves (k6/x/proxybench/sse with its http3 param): their
// requests go over this VU's QUIC connections, reused as the k6 options say, dialled through
// k6's resolver and timed like http3.get()'s (connect and QUIC handshake hooks on the request's
// trace). ctx is the VU context of the call (vu.Context()), state the VU's state.
//
// The module instance must be the VU's own, made with NewModuleInstance when the VU is created,
// so that its connections close when the VU is done with them (see closeWhenDone).
func (mi *ModuleInstance) RoundTripper(ctx context.Context, state *lib.State) http.RoundTripper {
	mi.pool.used(ctx)
	return &roundTripper{pool: mi.pool, state: state, iter: ctx}
}
