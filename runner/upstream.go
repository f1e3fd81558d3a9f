package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/proxybench/proxybench/internal/result"
)

// UpstreamReading is the upstream's counters at one time: the connections it accepted, and
// the requests it answered per route over all its listeners (nil from an upstream without
// GET /debug/served).
type UpstreamReading struct {
	Conns     int64
	Served    map[string]float64
	ServedErr error // why Served is nil
	// Later are the connections the reading itself opened after Conns was read: the next
	// reading counts them (the agent opens one per counter).
	Later int64
}

// readUpstream reads the upstream's GET /debug/conns and GET /debug/served through get, Conns
// being every connection the upstream has accepted, the reading's own included; later is
// UpstreamReading.Later.
func readUpstream(ctx context.Context, get func(ctx context.Context, path string, v any) error, later int64) (UpstreamReading, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var conns map[string]int64
	if err := get(ctx, "/debug/conns", &conns); err != nil {
		return UpstreamReading{}, fmt.Errorf("upstream connection counter: %w", err)
	}
	u := UpstreamReading{Later: later}
	for _, v := range conns {
		u.Conns += v
	}
	var served map[string]map[string]struct {
		Requests float64 `json:"requests"`
	}
	if err := get(ctx, "/debug/served", &served); err != nil {
		u.ServedErr = fmt.Errorf("upstream request counter: %w", err)
		return u, nil
	}
	u.Served = map[string]float64{}
	for _, routes := range served {
		for route, n := range routes {
			u.Served[route] += n.Requests
		}
	}
	return u, nil
}

func getJSON(ctx context.Context, c *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, res.Body)
		return fmt.Errorf("GET %s: status %d", url, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

// upstreamSeen is what the upstream did while a run went on: the connections it accepted, and
// the requests it answered on the run's route (nil: not read).
type upstreamSeen struct {
	conns    *result.UpstreamConns
	answered *float64
}

// watchUpstream returns the function that, called after the run, says what the upstream did
// since watchUpstream was called (the readings' own connections left out), or nil when there
// is no upstream to read (a local runner without UpstreamAddr) or the counters cannot be read
// (warned on stderr).
func (r *Runner) watchUpstream(ctx context.Context) func(requests float64, route string) upstreamSeen {
	if r.Stack == nil && r.UpstreamAddr == "" {
		return nil
	}
	side := r.StackSide()
	before, err := side.ReadUpstream(ctx)
	if err != nil {
		fmt.Fprintf(r.Stderr, "warning: no upstream counts for this run: %v\n", err)
		return nil
	}
	if before.ServedErr != nil {
		fmt.Fprintf(r.Stderr, "warning: no audit of the upstream's answers for this run: %v\n", before.ServedErr)
	}
	return func(requests float64, route string) upstreamSeen {
		after, err := side.ReadUpstream(context.WithoutCancel(ctx))
		if err != nil {
			fmt.Fprintf(r.Stderr, "warning: no upstream counts for this run: %v\n", err)
			return upstreamSeen{}
		}
		// the after reading's own connection, and those the before reading opened once it had
		// counted
		u := &result.UpstreamConns{Opened: float64(after.Conns - before.Conns - 1 - before.Later), Requests: requests}
		if requests > 0 {
			u.Per1k = u.Opened * 1000 / requests
		}
		seen := upstreamSeen{conns: u}
		if before.Served != nil && after.Served != nil {
			n := after.Served[route] - before.Served[route]
			seen.answered = &n
		}
		return seen
	}
}
