package agent

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/proxybench/proxybench/stack"
)

// serveUpstream answers with the upstream's own answer to path (/debug/served, /debug/conns),
// fetched from its cleartext listener at the address the stack listens on (state.json listen):
// the same JSON the runner reads when it shares the machine. The agent's own connection is one
// the upstream counts, as the runner's is.
func (a *Agent) serveUpstream(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st, status, err := a.upState()
		if err != nil {
			fail(w, status, err)
			return
		}
		addr := net.JoinHostPort(st.Listen, strconv.Itoa(st.Targets[stack.Direct].Ports.H1C))
		body, err := fetch(r.Context(), "http://"+addr+path)
		if err != nil {
			fail(w, http.StatusBadGateway, fmt.Errorf("upstream: %w", err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}

// fetch GETs url over a connection of its own (closed after), as runner's readUpstream does.
func fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, upstreamTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", url, res.StatusCode)
	}
	return body, nil
}
