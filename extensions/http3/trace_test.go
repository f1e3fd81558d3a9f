package http3

import (
	"context"
	"net"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.k6.io/k6/v2/lib/netext/httpext"
)

// TestDialedTrace: a connection the request dialled itself is timed as new
// even when quic-go calls it reused; one it did not dial keeps quic-go's word.
func TestDialedTrace(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name           string
		dial           bool
		reportedReused bool
		wantReused     bool
	}{
		{"dialled, reported new", true, false, false},
		{"dialled, reported reused (the race)", true, true, false},
		{"not dialled, reused", false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tracer := &httpext.Tracer{}
			ctx := dialedTrace(httptrace.WithClientTrace(context.Background(), tracer.Trace()))
			// quic-go dials with a context detached from the request's cancellation
			trace := httptrace.ContextClientTrace(context.WithoutCancel(ctx))

			trace.GetConn("bench.test:443")
			if tc.dial {
				trace.ConnectStart("udp", "127.0.0.1:443")
				time.Sleep(2 * time.Millisecond)
				trace.ConnectDone("udp", "127.0.0.1:443", nil)
			}
			trace.GotConn(httptrace.GotConnInfo{Conn: fakeConn{}, Reused: tc.reportedReused})

			trail := tracer.Done()
			assert.Equal(t, tc.wantReused, trail.ConnReused)
			if tc.dial {
				assert.GreaterOrEqual(t, trail.Connecting, 2*time.Millisecond)
			} else {
				assert.Zero(t, trail.Connecting)
			}
		})
	}
}

// fakeConn stands for the QUIC connection in GotConnInfo (quic-go passes
// one of its own, not a *tls.Conn).
type fakeConn struct{ net.Conn }

func (fakeConn) RemoteAddr() net.Addr { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443} }
