package http3

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoundTripperSharesTheVUConnections: a request made by another module through
// RoundTripper goes over HTTP/3 on the VU's QUIC connection, the one http3.get() uses.
func TestRoundTripperSharesTheVUConnections(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	var first jsResponse
	e.result(t, `http3.get("BASE/")`, &first)
	require.Equal(t, 200, first.Status, first.Error)

	rt := e.mi.RoundTripper(e.rt.VU.Context(), e.state)
	req, err := http.NewRequestWithContext(e.rt.VU.Context(), http.MethodGet, e.base+"/json", nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())

	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "HTTP/3.0", resp.Proto)
	assert.Contains(t, string(body), "proxybench")
	assert.Equal(t, int64(1), e.srv.Accepted(), "the module's request opened a connection of its own")
}
