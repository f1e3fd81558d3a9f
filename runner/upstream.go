package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// UpstreamConns is how many connections the upstream accepted while a run went on: behind a
// proxy, the proxy's upstream connections; for direct, the client's own. Reused cells should
// open next to none once warm; a proxy whose upstream pool is smaller than the requests it has
// in flight opens and closes one for about every request it forwards, and measures its pool
// policy instead of its proxying.
type UpstreamConns struct {
	Opened   float64 `json:"opened"`
	Requests float64 `json:"requests"` // every request k6 sent (AllRequests): the counter spans the whole run
	Per1k    float64 `json:"per_1k_requests"`
}

// connCount reads the upstream's GET /debug/conns at addr (host:port of its cleartext listener)
// over a connection of its own, and returns the sum of its counters: every connection the
// upstream has accepted, this one included.
func connCount(ctx context.Context, addr string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/conns", nil)
	if err != nil {
		return 0, err
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, fmt.Errorf("upstream connection counter: %w", err)
	}
	defer res.Body.Close()
	var c map[string]int64
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("upstream connection counter: GET %s: status %d", req.URL, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		return 0, fmt.Errorf("upstream connection counter: GET %s: %w", req.URL, err)
	}
	var n int64
	for _, v := range c {
		n += v
	}
	return n, nil
}

// countUpstream returns the function that, called after the run, says how many connections the
// upstream accepted since countUpstream was called (the readings' own connections left out), or
// nil when addr is empty or the counter cannot be read (warned on stderr).
func (r *Runner) countUpstream(ctx context.Context) func(requests float64) *UpstreamConns {
	if r.UpstreamAddr == "" {
		return nil
	}
	before, err := connCount(ctx, r.UpstreamAddr)
	if err != nil {
		fmt.Fprintf(r.Stderr, "warning: no upstream connection count for this run: %v\n", err)
		return nil
	}
	return func(requests float64) *UpstreamConns {
		after, err := connCount(context.WithoutCancel(ctx), r.UpstreamAddr)
		if err != nil {
			fmt.Fprintf(r.Stderr, "warning: no upstream connection count for this run: %v\n", err)
			return nil
		}
		u := &UpstreamConns{Opened: float64(after - before - 1), Requests: requests}
		if requests > 0 {
			u.Per1k = u.Opened * 1000 / requests
		}
		return u
	}
}

// addToFile adds fields to the result file at path, beside what k6 wrote (replaced atomically),
// so that a report rebuilt from the files alone has them too.
func addToFile(path string, fields map[string]any) error {
	return patchJSON(path, path, nil, fields)
}

// patchJSON writes to dst the JSON object of src without the keys of drop and with fields set
// over it, every other key kept as it was.
func patchJSON(src, dst string, drop []string, fields map[string]any) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("parse %s: %w", src, err)
	}
	for _, k := range drop {
		delete(doc, k)
	}
	for k, v := range fields {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		doc[k] = raw
	}
	return stack.WriteJSON(dst, doc)
}
