package http3

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext/httpext"
	"gopkg.in/guregu/null.v3"
)

// TestConnectionReuse counts QUIC connections on the server side for each
// reuse mode.
func TestConnectionReuse(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name       string
		opts       stateOption
		iterations int
		perIter    int
		wantConns  int64
	}{
		{"reused by default, across iterations", nil, 3, 4, 1},
		{"noConnectionReuse: one per request", func(s *lib.State) {
			s.Options.NoConnectionReuse = null.BoolFrom(true)
		}, 2, 5, 10},
		{"noVUConnectionReuse: one per iteration", func(s *lib.State) {
			s.Options.NoVUConnectionReuse = null.BoolFrom(true)
		}, 3, 4, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts []stateOption
			if tc.opts != nil {
				opts = append(opts, tc.opts)
			}
			e := newTestEnv(t, opts...)
			var all []jsResponse
			for range tc.iterations {
				e.newIteration(t)
				var rs []jsResponse
				e.result(t, fmt.Sprintf(`Array.from({length: %d}, () => http3.get("BASE/"))`, tc.perIter), &rs)
				all = append(all, rs...)
			}
			assert.Equal(t, tc.wantConns, e.srv.Accepted())

			// a new connection is timed, a reused one is not
			var newConns int64
			for i, r := range all {
				require.Equal(t, 200, r.Status, r.Error)
				if r.Timings.TLSHandshaking > 0 {
					newConns++
					assert.Greater(t, r.Timings.Connecting, 0.0, "request %d", i)
					assert.GreaterOrEqual(t, r.Timings.Blocked, r.Timings.Connecting+r.Timings.TLSHandshaking)
				} else {
					assert.Zero(t, r.Timings.Connecting, "request %d", i)
				}
			}
			assert.Equal(t, tc.wantConns, newConns, "requests timed with a handshake")
			assert.Greater(t, all[0].Timings.TLSHandshaking, 0.0, "the first request opens a connection")

			// connections the VU is done with are closed cleanly
			e.mi.pool.closeAll()
			eventually(t, func() bool { return e.srv.ClosedCleanly() == tc.wantConns },
				"closed cleanly: %d of %d (otherwise: %d)", e.srv.ClosedCleanly(), tc.wantConns, e.srv.ClosedOtherwise())
			eventually(t, func() bool { return e.mi.pool.openConns() == 0 }, "open connections left")
		})
	}
}

// TestConnectionClosedAtIterationEnd: with noVUConnectionReuse the
// connection closes when the iteration ends, not at the next request.
func TestConnectionClosedAtIterationEnd(t *testing.T) {
	t.Parallel()

	e := newTestEnv(t, func(s *lib.State) { s.Options.NoVUConnectionReuse = null.BoolFrom(true) })
	e.newIteration(t)
	_, err := e.run(`http3.get("BASE/")`)
	require.NoError(t, err)
	assert.Zero(t, e.srv.ClosedCleanly())
	e.newIteration(t) // ends the previous one
	eventually(t, func() bool { return e.srv.ClosedCleanly() == 1 }, "the iteration's connection is closed")
}

// TestConnectionClosedWithVU: when the context the VU was created with ends
// (setup, teardown, handleSummary VUs; the tests' runtime), its connections
// close cleanly; a request after closeAll dials again.
func TestConnectionClosedWithVU(t *testing.T) {
	t.Parallel()

	e := newTestEnv(t)
	_, err := e.run(`http3.get("BASE/")`)
	require.NoError(t, err)

	e.mi.pool.closeAll()
	eventually(t, func() bool { return e.srv.ClosedCleanly() == 1 }, "closeAll closes")
	_, err = e.run(`http3.get("BASE/")`)
	require.NoError(t, err)
	assert.Equal(t, int64(2), e.srv.Accepted(), "dialled again after closeAll")

	e.rt.CancelContext()
	eventually(t, func() bool { return e.srv.ClosedCleanly() == 2 }, "the VU context's end closes")
}

// TestConnectionKeptAfterInitContext: a scenario VU is created with a
// context that ends right after initialization, possibly once its first
// iteration has started: that must not close the iteration's connection.
func TestConnectionKeptAfterInitContext(t *testing.T) {
	t.Parallel()

	e := newTestEnv(t)
	e.newIteration(t)
	_, err := e.run(`http3.get("BASE/")`)
	require.NoError(t, err)
	e.rt.CancelContext() // the creation context ends
	select {
	case <-e.mi.creationEnded:
	case <-time.After(5 * time.Second):
		t.Fatal("the end of the creation context was never acted on")
	}
	_, err = e.run(`http3.get("BASE/")`)
	require.NoError(t, err)
	assert.Equal(t, int64(1), e.srv.Accepted())
	assert.Zero(t, e.srv.ClosedCleanly())
}

// TestManyVUs: 50 VUs each with its connection, all closed at once as at the
// end of a test: no panic, every connection closed cleanly.
func TestManyVUs(t *testing.T) {
	t.Parallel()

	const vus = 50
	srv := startServer(t)
	envs := make([]*testEnv, vus)
	for i := range envs {
		envs[i] = newTestEnvFor(t, srv)
	}
	var wg sync.WaitGroup
	for _, e := range envs {
		wg.Go(func() {
			_, err := e.run(`http3.batch(["BASE/", "BASE/json", "BASE/healthz"])`)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, int64(vus), srv.Accepted())

	for _, e := range envs {
		wg.Go(e.mi.pool.closeAll)
		wg.Go(e.mi.pool.closeAll) // twice: TestEnd and Exit both close
	}
	wg.Wait()
	eventually(t, func() bool { return srv.ClosedCleanly() == vus },
		"closed cleanly: %d of %d", srv.ClosedCleanly(), vus)
	assert.Zero(t, srv.ClosedOtherwise())
}

// TestTLSConfig: the VU's TLS configuration is used as is, but for the
// version, which QUIC fixes at 1.3.
func TestTLSConfig(t *testing.T) {
	t.Parallel()

	ca := ca(t)
	tests := []struct {
		name    string
		state   *lib.State
		wantErr string
	}{
		{"no TLS config", &lib.State{}, ""},
		{"k6's", &lib.State{TLSConfig: &tls.Config{RootCAs: ca.Pool, InsecureSkipVerify: true}}, ""}, //nolint:gosec // what the test is about
		{
			"tlsVersion max 1.2", &lib.State{TLSConfig: &tls.Config{MaxVersion: tls.VersionTLS12}},
			"http3: the tlsVersion option allows at most TLS 1.2, but QUIC needs TLS 1.3",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conf, err := tlsConfig(tc.state)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, uint16(tls.VersionTLS13), conf.MinVersion)
			if tc.state.TLSConfig != nil {
				assert.NotSame(t, tc.state.TLSConfig, conf, "a clone")
				assert.Same(t, tc.state.TLSConfig.RootCAs, conf.RootCAs)
				assert.Equal(t, tc.state.TLSConfig.InsecureSkipVerify, conf.InsecureSkipVerify)
			}
		})
	}
}

func TestDialError(t *testing.T) {
	t.Parallel()

	raddr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443}
	tests := []struct {
		name string
		err  error
		code int // 0: not a K6Error
	}{
		{"refused by the server", &quic.TransportError{ErrorCode: quic.ConnectionRefused, Remote: true}, 1212},
		{"refused by us", &quic.TransportError{ErrorCode: quic.ConnectionRefused}, 0},
		{"other", errors.New("boom"), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := dialError(raddr, tc.err)
			var k6e httpext.K6Error
			if tc.code == 0 {
				assert.False(t, errors.As(err, &k6e))
				return
			}
			require.ErrorAs(t, err, &k6e)
			assert.EqualValues(t, tc.code, k6e.Code)
			assert.Equal(t, "dial: connection refused", k6e.Message)
		})
	}
}
