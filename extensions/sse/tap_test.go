package sse

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock advances by step on every reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.t = c.t.Add(c.step)
	return c.t
}

// chunkBody returns one chunk per Read, then err (io.EOF by default).
type chunkBody struct {
	chunks []string
	err    error
	closed bool
	reads  int
}

func (b *chunkBody) Read(p []byte) (int, error) {
	b.reads++
	if len(b.chunks) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		return 0, io.EOF
	}
	n := copy(p, b.chunks[0])
	b.chunks = b.chunks[1:]
	return n, nil
}

func (b *chunkBody) Close() error {
	b.closed = true
	return nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTapBody(t *testing.T) {
	t.Parallel()

	ms := time.Millisecond
	readErr := errors.New("connection reset")

	tests := []struct {
		name      string
		mode      mode
		maxEvents int
		body      *chunkBody

		wantErr    error
		wantChunks []time.Duration
		wantSizes  []int64
		wantEvents []time.Duration // arrival times
		wantBytes  int64
		wantEnd    time.Duration
		wantReads  int // reads that reached the server's body
	}{
		{
			name:       "chunks: one time per read that returned data",
			mode:       modeChunks,
			body:       &chunkBody{chunks: []string{"aa", "bbb", "c"}},
			wantErr:    io.EOF,
			wantChunks: []time.Duration{2 * ms, 3 * ms, 4 * ms}, // the clock ticks 1 ms a reading
			wantSizes:  []int64{2, 3, 1},
			wantBytes:  6,
			wantEnd:    5 * ms,
			wantReads:  4,
		},
		{
			name:       "events: timed when their blank line arrives",
			mode:       modeEvents,
			body:       &chunkBody{chunks: []string{"data: 1\n", "\ndata: 2\n\nda", "ta: 3\n\n"}},
			wantErr:    io.EOF,
			wantEvents: []time.Duration{3 * ms, 3 * ms, 4 * ms},
			wantBytes:  27,
			wantEnd:    5 * ms,
			wantReads:  4,
		},
		{
			name:       "events: maxEvents stops reading",
			mode:       modeEvents,
			maxEvents:  2,
			body:       &chunkBody{chunks: []string{"data: 1\n\n", "data: 2\n\ndata: 3\n\n", "data: 4\n\n"}},
			wantErr:    io.EOF,
			wantEvents: []time.Duration{2 * ms, 3 * ms},
			wantBytes:  27,
			wantEnd:    3 * ms,
			wantReads:  2,
		},
		{
			name:       "read error ends the body",
			mode:       modeChunks,
			body:       &chunkBody{chunks: []string{"x"}, err: readErr},
			wantErr:    readErr,
			wantChunks: []time.Duration{2 * ms},
			wantSizes:  []int64{1},
			wantBytes:  1,
			wantEnd:    3 * ms,
			wantReads:  2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			clock := &fakeClock{t: time.Unix(0, 0), step: ms}
			rec := newRecorder(tc.mode, tc.maxEvents)
			rec.now = clock.now
			tr := &tapTransport{rec: rec, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Body: tc.body}, nil
			})}

			resp, err := tr.RoundTrip(&http.Request{})
			require.NoError(t, err)
			buf := make([]byte, 64)
			for err == nil {
				_, err = resp.Body.Read(buf)
			}
			require.ErrorIs(t, err, tc.wantErr)
			require.NoError(t, resp.Body.Close())

			h := rec.cur
			assert.Equal(t, time.Unix(0, 0).Add(ms), rec.start)
			assert.Equal(t, ms, rec.since(h.headersAt))
			assert.Equal(t, tc.wantChunks, h.chunks)
			assert.Equal(t, tc.wantSizes, h.sizes)
			var at []time.Duration
			for _, ev := range h.events {
				at = append(at, ev.At)
			}
			assert.Equal(t, tc.wantEvents, at)
			assert.Equal(t, tc.wantBytes, h.bytes)
			assert.Equal(t, tc.wantEnd, rec.since(h.end))
			assert.Equal(t, tc.wantReads, tc.body.reads)
			assert.True(t, tc.body.closed)
		})
	}
}

func TestTapTransportLastHopWins(t *testing.T) {
	t.Parallel()

	rec := newRecorder(modeEvents, 0)
	bodies := []*chunkBody{
		{chunks: []string{"data: redirect\n\n"}},
		{chunks: []string{"data: final\n\n"}},
	}
	calls := 0
	tr := &tapTransport{rec: rec, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
		b := bodies[calls]
		calls++
		return &http.Response{StatusCode: http.StatusOK, Body: b}, nil
	})}

	for range bodies {
		resp, err := tr.RoundTrip(&http.Request{})
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	require.Len(t, rec.cur.events, 1)
	assert.Equal(t, "final", rec.cur.events[0].Data)
}

func TestTapTransportError(t *testing.T) {
	t.Parallel()

	dialErr := errors.New("connection refused")
	rec := newRecorder(modeChunks, 0)
	tr := &tapTransport{rec: rec, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, dialErr
	})}

	_, err := tr.RoundTrip(&http.Request{})
	require.ErrorIs(t, err, dialErr)
	assert.True(t, rec.cur.headersAt.IsZero())
	assert.False(t, rec.cur.end.IsZero())
}
