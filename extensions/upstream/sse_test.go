package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

type tick struct {
	Seq int   `json:"seq"`
	TS  int64 `json:"ts"`
}

// readEvent reads one event block and returns its data, or io.EOF at the
// end of the stream.
func readEvent(r *bufio.Reader) (tick, error) {
	var ev tick
	var lines []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && len(lines) == 0 && line == "" {
				return ev, io.EOF
			}
			return ev, fmt.Errorf("after %q: %w", lines, err)
		}
		if line == "\n" {
			break
		}
		lines = append(lines, strings.TrimSuffix(line, "\n"))
	}
	if len(lines) != 2 || lines[0] != "event: tick" || !strings.HasPrefix(lines[1], "data: ") {
		return ev, fmt.Errorf("event %q, want `event: tick` then `data: {...}`", lines)
	}
	data := strings.TrimPrefix(lines[1], "data: ")
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return ev, fmt.Errorf("data %q: %w", data, err)
	}
	return ev, nil
}

func TestSSE(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	tests := []struct {
		query string
		count int
	}{
		{"", 3},
		{"?count=1", 1},
		{"?count=25&interval_ms=0", 25},
		{"?count=2&interval_ms=10", 2},
	}
	for _, p := range allProtos {
		c := s.client(t, p, true)
		for _, tt := range tests {
			t.Run(string(p)+tt.query, func(t *testing.T) {
				t.Parallel()
				before := time.Now().UnixMilli()
				resp, err := c.Get(s.url(p, "/sse"+tt.query))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				for k, want := range map[string]string{
					"Content-Type":  "text/event-stream",
					"Cache-Control": "no-cache",
				} {
					if got := resp.Header.Get(k); got != want {
						t.Errorf("%s = %q, want %q", k, got, want)
					}
				}
				r := bufio.NewReader(resp.Body)
				var prev int64
				for i := 0; ; i++ {
					ev, err := readEvent(r)
					if errors.Is(err, io.EOF) {
						if i != tt.count {
							t.Errorf("got %d events, want %d", i, tt.count)
						}
						break
					}
					if err != nil {
						t.Fatalf("event %d: %v", i, err)
					}
					if ev.Seq != i {
						t.Errorf("event %d has seq %d", i, ev.Seq)
					}
					if ev.TS < before || ev.TS > time.Now().UnixMilli() || ev.TS < prev {
						t.Errorf("event %d has ts %d, want a unix-ms time since %d, not before %d", i, ev.TS, before, prev)
					}
					prev = ev.TS
				}
			})
		}
	}
}

// TestSSETimeToFirstEvent: the first event comes at once, the stream ends
// count-1 intervals later.
func TestSSETimeToFirstEvent(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const interval = 200 * time.Millisecond
	for _, p := range allProtos {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			c := s.client(t, p, true)
			start := time.Now()
			resp, err := c.Get(s.url(p, "/sse?count=3&interval_ms=200"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			if _, err := readEvent(r); err != nil {
				t.Fatal(err)
			}
			first := time.Since(start)
			if _, err := io.Copy(io.Discard, r); err != nil {
				t.Fatal(err)
			}
			total := time.Since(start)
			if first >= interval {
				t.Errorf("first event after %v, want it before the first interval (%v)", first, interval)
			}
			if total-first < 2*interval-20*time.Millisecond {
				t.Errorf("first event at %v, end at %v: want the end about two intervals after the first event", first, total)
			}
		})
	}
}

// TestSSEClientGone: a client leaving mid-stream ends the handler, which the
// graceful shutdown in the cleanup would otherwise wait for.
func TestSSEClientGone(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	c := s.client(t, protoH1C, true)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url(protoH1C, "/sse?count=10000&interval_ms=60000"), nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readEvent(bufio.NewReader(resp.Body)); err != nil {
		t.Fatal(err)
	}
	cancel()
	_ = resp.Body.Close()

	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		t.Errorf("shutdown with a departed SSE client: %v, want the handler gone", err)
	}
}
