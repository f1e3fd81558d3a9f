package sse

import (
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/lib/netext/httpext"
)

func TestResultToJS(t *testing.T) {
	t.Parallel()

	ms := time.Millisecond
	tests := []struct {
		name string
		res  *Result
		want string
	}{
		{
			name: "events",
			res: &Result{
				mode: modeEvents, Status: 200, Proto: "HTTP/1.1", Headers: map[string]string{"A": "b"},
				Bytes: 42, HasFirstByte: true, FirstByte: 2 * ms, Duration: 9 * ms,
				Events: []timedEvent{
					{Event: Event{Type: "tick", Data: "1", ID: "1"}, At: 3 * ms},
					{Event: Event{Type: "tick", Data: "2", ID: "2"}, At: 8 * ms},
				},
			},
			want: `{"status":200,"proto":"HTTP/1.1","headers":{"A":"b"},"bytes":42,"first_byte_ms":2,
				"events":[{"event":"tick","data":"1","id":"1","at_ms":3},{"event":"tick","data":"2","id":"2","at_ms":8}],
				"first_event_ms":3,"gaps_ms":[5],"duration_ms":9,"error":"","error_code":0}`,
		},
		{
			name: "failed get: nulls and empty arrays",
			res:  &Result{mode: modeEvents, Headers: map[string]string{}, Error: "request timeout", ErrorCode: 1050},
			want: `{"status":0,"proto":"","headers":{},"bytes":0,"first_byte_ms":null,
				"events":[],"first_event_ms":null,"gaps_ms":[],"duration_ms":0,"error":"request timeout","error_code":1050}`,
		},
		{
			name: "chunks",
			res: &Result{
				mode: modeChunks, Status: 200, Proto: "HTTP/2.0", Headers: map[string]string{},
				Bytes: 3, HasFirstByte: true, FirstByte: ms, Duration: 4 * ms,
				Chunks: []time.Duration{ms + 500*time.Microsecond, 3 * ms}, ChunkSizes: []int64{1, 2},
			},
			want: `{"status":200,"proto":"HTTP/2.0","headers":{},"bytes":3,"first_byte_ms":1,
				"chunks_ms":[1.5,3],"chunks_bytes":[1,2],"first_chunk_ms":1.5,"duration_ms":4,"error":"","error_code":0}`,
		},
		{
			name: "chunks held to expect",
			res: &Result{
				mode: modeChunks, Status: 200, Proto: "HTTP/2.0", Headers: map[string]string{},
				Bytes: 3, HasFirstByte: true, FirstByte: ms, Duration: 4 * ms,
				Chunks: []time.Duration{3 * ms}, ChunkSizes: []int64{3}, Checked: true, BodyDiffersAt: 2,
			},
			want: `{"status":200,"proto":"HTTP/2.0","headers":{},"bytes":3,"first_byte_ms":1,
				"chunks_ms":[3],"chunks_bytes":[3],"first_chunk_ms":3,"body_differs_at":2,"duration_ms":4,"error":"","error_code":0}`,
		},
		{
			name: "failed stream: nulls and empty arrays",
			res:  &Result{mode: modeChunks, Headers: map[string]string{}, Error: "request timeout", ErrorCode: 1050},
			want: `{"status":0,"proto":"","headers":{},"bytes":0,"first_byte_ms":null,
				"chunks_ms":[],"chunks_bytes":[],"first_chunk_ms":null,"duration_ms":0,"error":"request timeout","error_code":1050}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := sobek.New()
			require.NoError(t, rt.Set("res", tc.res.toJS(rt)))

			v, err := rt.RunString(`JSON.stringify(res)`)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, v.String())

			v, err = rt.RunString(`Array.isArray(res.events || res.chunks_ms)`)
			require.NoError(t, err)
			assert.True(t, v.ToBoolean())
		})
	}
}

func TestNewResult(t *testing.T) {
	t.Parallel()

	ms := time.Millisecond
	start := time.Unix(0, 0)

	t.Run("not sent", func(t *testing.T) {
		t.Parallel()
		res := newResult(modeEvents, newRecorder(modeEvents, 0), &httpext.Response{Error: "x", ErrorCode: 1020})
		assert.Equal(t, "x", res.Error)
		assert.Equal(t, 1020, res.ErrorCode)
		assert.Zero(t, res.Duration)
		assert.False(t, res.HasFirstByte)
		assert.False(t, res.Checked)
	})

	t.Run("not sent, with expect: nothing differs", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(modeChunks, 0)
		want := "abc"
		rec.expect = &want
		res := newResult(modeChunks, rec, &httpext.Response{Error: "x", ErrorCode: 1020})
		assert.True(t, res.Checked)
		assert.Equal(t, int64(-1), res.BodyDiffersAt)
	})

	t.Run("the hop's body check", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(modeChunks, 0)
		want := "abcdef"
		rec.expect = &want
		rec.start = start
		check := newBodyCheck(want)
		check.feed([]byte("abc"))
		check.feed([]byte("dXf"))
		rec.cur = &hop{headersAt: start.Add(ms), end: start.Add(2 * ms), bytes: 6, check: check}
		res := newResult(modeChunks, rec, &httpext.Response{Status: 200})
		assert.True(t, res.Checked)
		assert.Equal(t, int64(4), res.BodyDiffersAt)
	})

	t.Run("k6's status wins over the hop's", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(modeChunks, 0)
		rec.start = start
		rec.cur = &hop{headersAt: start.Add(2 * ms), end: start.Add(7 * ms), bytes: 5, chunks: []time.Duration{3 * ms}}
		res := newResult(modeChunks, rec, &httpext.Response{Status: 0, Error: "request timeout", ErrorCode: 1050})

		assert.Equal(t, 0, res.Status)
		assert.Equal(t, 7*ms, res.Duration)
		assert.Equal(t, 2*ms, res.FirstByte)
		assert.True(t, res.HasFirstByte)
		assert.Equal(t, int64(5), res.Bytes)
		first, ok := res.FirstChunk()
		assert.True(t, ok)
		assert.Equal(t, 3*ms, first)
	})
}
