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

// upstreamReading is the upstream's counters at one time: the connections it accepted, and
// the requests it answered per route over all its listeners (nil from an upstream without
// GET /debug/served).
type upstreamReading struct {
	conns     int64
	served    map[string]float64
	servedErr error // why served is nil
}

// readUpstream reads the upstream's GET /debug/conns and GET /debug/served at addr (host:port
// of its cleartext listener) over one connection of its own, counted in conns: every
// connection the upstream has accepted, this one included.
func readUpstream(ctx context.Context, addr string) (upstreamReading, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tr := &http.Transport{MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var conns map[string]int64
	if err := getJSON(ctx, c, "http://"+addr+"/debug/conns", &conns); err != nil {
		return upstreamReading{}, fmt.Errorf("upstream connection counter: %w", err)
	}
	var u upstreamReading
	for _, v := range conns {
		u.conns += v
	}
	var served map[string]map[string]struct {
		Requests float64 `json:"requests"`
	}
	if err := getJSON(ctx, c, "http://"+addr+"/debug/served", &served); err != nil {
		u.servedErr = fmt.Errorf("upstream request counter: %w", err)
		return u, nil
	}
	u.served = map[string]float64{}
	for _, routes := range served {
		for route, n := range routes {
			u.served[route] += n.Requests
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
// since watchUpstream was called (the readings' own connections left out), or nil when addr is
// empty or the counters cannot be read (warned on stderr).
func (r *Runner) watchUpstream(ctx context.Context) func(requests float64, route string) upstreamSeen {
	if r.UpstreamAddr == "" {
		return nil
	}
	before, err := readUpstream(ctx, r.UpstreamAddr)
	if err != nil {
		fmt.Fprintf(r.Stderr, "warning: no upstream counts for this run: %v\n", err)
		return nil
	}
	if before.servedErr != nil {
		fmt.Fprintf(r.Stderr, "warning: no audit of the upstream's answers for this run: %v\n", before.servedErr)
	}
	return func(requests float64, route string) upstreamSeen {
		after, err := readUpstream(context.WithoutCancel(ctx), r.UpstreamAddr)
		if err != nil {
			fmt.Fprintf(r.Stderr, "warning: no upstream counts for this run: %v\n", err)
			return upstreamSeen{}
		}
		u := &result.UpstreamConns{Opened: float64(after.conns - before.conns - 1), Requests: requests}
		if requests > 0 {
			u.Per1k = u.Opened * 1000 / requests
		}
		seen := upstreamSeen{conns: u}
		if before.served != nil && after.served != nil {
			n := after.served[route] - before.served[route]
			seen.answered = &n
		}
		return seen
	}
}
