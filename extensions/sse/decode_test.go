package sse

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCodings(t *testing.T) {
	t.Parallel()

	tests := []struct {
		header string
		want   []string
	}{
		{"", nil},
		{"identity", nil},
		{"gzip", []string{"gzip"}},
		{" GZip ", []string{"gzip"}},
		{"deflate, br", []string{"deflate", "br"}},
		{"zstd", []string{"zstd"}},
		{"x-gzip", []string{"x-gzip"}},
		{"gzip, compress", nil}, // a coding k6/http can't decode either: the body as it came
	}
	for _, tc := range tests {
		t.Run(tc.header, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, codings(tc.header))
		})
	}
}

// TestTapBodyDecodeErrors: a body that does not decode ends with an error naming the coding,
// as k6/http's does; an empty one is just empty.
func TestTapBodyDecodeErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, coding, body string
		wantErr            string
	}{
		{name: "not gzip", coding: "gzip", body: "data: 1\n\n", wantErr: "Content-Encoding gzip"},
		{name: "not zlib", coding: "deflate", body: "data: 1\n\n", wantErr: "Content-Encoding deflate"},
		{name: "not brotli", coding: "br", body: "data: 1\n\n", wantErr: "decoding the response body"},
		{name: "empty gzip", coding: "gzip", body: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			rec := newRecorder(modeEvents, 0)
			tr := &tapTransport{rec: rec, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
				h := http.Header{"Content-Encoding": {tc.coding}}
				return &http.Response{StatusCode: http.StatusOK, Header: h, Body: &chunkBody{chunks: []string{tc.body}}}, nil
			})}
			resp, err := tr.RoundTrip(&http.Request{})
			require.NoError(t, err)
			_, err = io.Copy(io.Discard, resp.Body)
			require.NoError(t, resp.Body.Close())
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Zero(t, rec.cur.bytes)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			assert.Empty(t, rec.cur.events)
			assert.False(t, rec.cur.end.IsZero(), "the error ends the body")
		})
	}
}
