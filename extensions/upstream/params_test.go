package upstream

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestParseInts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		query   string
		want    []int
		wantErr string
	}{
		{"defaults", "", []int{8, 4096, 0}, ""},
		{"all set", "chunks=2&chunk_bytes=10&interval_ms=5", []int{2, 10, 5}, ""},
		{"bounds low", "chunks=1&chunk_bytes=1&interval_ms=0", []int{1, 1, 0}, ""},
		{"bounds high", "chunks=10000&chunk_bytes=1048576&interval_ms=10000", []int{10000, 1048576, 10000}, ""},
		{"unknown ignored", "foo=bar&chunks=3", []int{3, 4096, 0}, ""},
		{"plus is a space", "chunks=+3", nil, `chunks must be an integer in 1..10000, got " 3"`},
		{"empty value", "chunks=", nil, `chunks must be an integer in 1..10000, got ""`},
		{"repeated", "chunks=1&chunks=2", nil, "chunks given 2 times"},
		{"bad escape", "chunks=%zz", nil, "malformed query string"},
		{"overflow", "chunk_bytes=99999999999999999999", nil, "chunk_bytes must be an integer in 1..1048576"},
		{"float", "interval_ms=1.5", nil, `interval_ms must be an integer in 0..10000, got "1.5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := make([]int, len(streamParams))
			err := parseInts(tt.query, streamParams[:], got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBadParams sends every parameter malformed and out of range, over the
// wire: 400 with a plain-text message naming the parameter and its range.
func TestBadParams(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	c := s.client(t, protoH1C, true)

	type param struct {
		route, name, allowed string
	}
	params := []param{
		{"/stream", "chunks", "1..10000"},
		{"/stream", "chunk_bytes", "1..1048576"},
		{"/stream", "interval_ms", "0..10000"},
		{"/sse", "count", "1..10000"},
		{"/sse", "interval_ms", "0..60000"},
	}
	upper := map[string]string{
		"chunks": "10001", "chunk_bytes": "1048577", "count": "10001",
	}
	for _, p := range params {
		bad := []string{"abc", "-1", "1.5", "", "0x10", "1e3"}
		if u, ok := upper[p.name]; ok {
			bad = append(bad, u, "0")
		} else if p.route == "/stream" {
			bad = append(bad, "10001")
		} else {
			bad = append(bad, "60001")
		}
		for _, v := range bad {
			t.Run(p.route+"/"+p.name+"="+v, func(t *testing.T) {
				t.Parallel()
				resp, body := get(t, c, s.url(protoH1C, p.route+"?"+p.name+"="+v))
				if resp.StatusCode != http.StatusBadRequest {
					t.Fatalf("status = %d, want 400", resp.StatusCode)
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
					t.Errorf("Content-Type = %q, want text/plain", ct)
				}
				msg := string(body)
				if !strings.Contains(msg, p.name) || !strings.Contains(msg, p.allowed) {
					t.Errorf("message %q does not name %s and its range %s", msg, p.name, p.allowed)
				}
			})
		}
	}
}
