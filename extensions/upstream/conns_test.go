package upstream

import (
	"encoding/json"
	"net/http"
	"testing"
)

type connCounts struct {
	H1C int64 `json:"h1c"`
	TLS int64 `json:"tls"`
	H3  int64 `json:"h3"`
}

func readConns(t *testing.T, s *stack, c *http.Client) connCounts {
	t.Helper()
	resp, body := get(t, c, s.url(protoH1C, "/debug/conns"))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/debug/conns: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var cc connCounts
	if err := json.Unmarshal(body, &cc); err != nil {
		t.Fatalf("/debug/conns %s: %v", body, err)
	}
	return cc
}

// TestDebugConns: fresh clients add one connection per request to their
// listener's count, a keep-alive client one in all.
func TestDebugConns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		proto     proto
		keepAlive bool
		requests  int
		want      connCounts
	}{
		{protoH1C, false, 5, connCounts{H1C: 5}},
		{protoH1C, true, 5, connCounts{H1C: 1}},
		{protoH1, false, 4, connCounts{TLS: 4}},
		{protoH2, false, 3, connCounts{TLS: 3}},
		{protoH2, true, 6, connCounts{TLS: 1}},
		{protoH3, false, 4, connCounts{H3: 4}},
		{protoH3, true, 6, connCounts{H3: 1}},
	}
	for _, tt := range tests {
		name := string(tt.proto) + map[bool]string{true: "/reused", false: "/fresh"}[tt.keepAlive]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t)
			// The observer keeps its one connection: counted once, before.
			observer := s.client(t, protoH1C, true)
			before := readConns(t, s, observer)
			c := s.client(t, tt.proto, tt.keepAlive)
			for range tt.requests {
				get(t, c, s.url(tt.proto, "/"))
			}
			after := readConns(t, s, observer)
			got := connCounts{H1C: after.H1C - before.H1C, TLS: after.TLS - before.TLS, H3: after.H3 - before.H3}
			if got != tt.want {
				t.Errorf("%d requests opened %+v, want %+v", tt.requests, got, tt.want)
			}
		})
	}
}
