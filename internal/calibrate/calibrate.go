package calibrate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/runner"
)

// Calibration is one client's run in `make calibrate`: k6 with our reused scenario, or a peer.
type Calibration struct {
	Target   string  `json:"target"`
	Proto    string  `json:"proto"`
	Mode     string  `json:"mode"`   // reused, fresh
	Client   string  `json:"client"` // k6-native, k6-http (CalibrationLabel), wrk, h2load
	Round    int     `json:"round"`
	Requests float64 `json:"requests"` // every request the client sent (k6: warm-up included)
	RPS      float64 `json:"rps"`      // measured requests per second (k6: its measured window)
	// ClientCPUMicros is the client's CPU over its whole life (start-up included) per request
	// it sent; ReqPerCPUSecond its inverse, the figure compared across clients.
	ClientCPUMicros float64 `json:"client_cpu_us_per_req"`
	ReqPerCPUSecond float64 `json:"req_per_client_cpu_s"`
	TargetCPUMicros float64 `json:"target_cpu_us_per_req"`
	// VsPeer is ReqPerCPUSecond over the most frugal peer's for the same target and protocol
	// (k6's rows only).
	VsPeer float64 `json:"vs_peer,omitempty"`
	Err    string  `json:"error,omitempty"`
}

func (c *Calibration) setCosts(rs *sample.Resources) {
	if rs == nil || rs.Requests <= 0 || rs.ClientCPUSeconds <= 0 {
		return
	}
	c.ClientCPUMicros = rs.ClientCPUSeconds / rs.Requests * 1e6
	c.ReqPerCPUSecond = rs.Requests / rs.ClientCPUSeconds
	c.TargetCPUMicros = rs.TargetCPUPerReqMicros
}

// CalibrationLabel is the client column of k6's calibration rows for a CLIENT value.
func CalibrationLabel(client string) string {
	if client == runner.ClientK6 {
		return "k6-http"
	}
	return "k6-native"
}

// IsK6 tells whether a calibration row is one of k6's (not a native peer's).
func (c *Calibration) IsK6() bool {
	return strings.HasPrefix(c.Client, "k6-")
}

// Run runs, one after the other, k6 with the reused scenario of j.Proto on each of
// k6Clients (ClientNative, ClientK6) and each native peer of that protocol on the same load
// against j.Target (its pid sampled as for any run), reversed on even rounds (j.Run) so that no
// client always runs first. j.Env is k6's load (the same connections and streams as l, its
// DURATION l's).
func Run(ctx context.Context, r *runner.Runner, testid string, j runner.Job, l PeerLoad, pid int, k6Clients []string) []*Calibration {
	mode := "reused"
	if l.Fresh {
		mode = "fresh"
	}
	var clients []func() *Calibration
	for _, client := range k6Clients {
		clients = append(clients, func() *Calibration { return calibrateK6(ctx, r, testid, j, pid, client, mode) })
	}
	for _, p := range Peers {
		if p.Proto != j.Proto || p.Fresh != l.Fresh {
			continue
		}
		clients = append(clients, func() *Calibration {
			fmt.Fprintf(r.Stderr, "calibrate: %s %s %s %s (round %d)\n", p.Name, mode, j.Proto, j.Target, j.Run)
			pr := RunPeer(ctx, r, p, j.Target, l, pid)
			c := &Calibration{Target: j.Target, Proto: j.Proto, Mode: mode, Client: p.Name, Round: j.Run, Requests: pr.Requests, Err: pr.Err}
			if pr.Seconds > 0 {
				c.RPS = pr.Requests / pr.Seconds
			}
			c.setCosts(pr.Resources)
			return c
		})
	}
	if j.Run%2 == 0 {
		slices.Reverse(clients)
	}
	var rows []*Calibration
	for _, run := range clients {
		if ctx.Err() != nil {
			break
		}
		rows = append(rows, run())
	}
	return rows
}

// calibrateK6 runs the scenario of mode (reused, fresh) and j.Proto with k6 on client.
func calibrateK6(ctx context.Context, r *runner.Runner, testid string, j runner.Job, pid int, client, mode string) *Calibration {
	label := CalibrationLabel(client)
	fmt.Fprintf(r.Stderr, "calibrate: %s %s-%s %s (round %d)\n", label, mode, j.Proto, j.Target, j.Run)
	job := j
	job.Scenario, job.Proto = mode+"-"+j.Proto, ""
	rc := *r
	rc.Client = client
	res, rs := rc.RunSampled(ctx, testid+"-"+client, job, pid)
	c := &Calibration{Target: j.Target, Proto: j.Proto, Mode: mode, Client: label, Round: j.Run, Err: res.Err}
	if res.Err == "" && !res.Valid {
		c.Err = "invalid: " + strings.Join(res.Invalid, "; ")
	}
	if res.RPS != nil {
		c.RPS = *res.RPS
	}
	if rs != nil {
		c.Requests = rs.Requests
	}
	c.setCosts(rs)
	return c
}

// SetVsPeer sets each k6 row's VsPeer: its requests per client CPU-second over the most frugal
// peer's (the largest) for the same target, protocol, mode and round.
func SetVsPeer(rows []*Calibration) {
	for _, c := range rows {
		if !c.IsK6() || c.ReqPerCPUSecond == 0 {
			continue
		}
		best := 0.0
		for _, p := range rows {
			if !p.IsK6() && p.Target == c.Target && p.Proto == c.Proto && p.Mode == c.Mode && p.Round == c.Round && p.Err == "" {
				best = max(best, p.ReqPerCPUSecond)
			}
		}
		if best > 0 {
			c.VsPeer = c.ReqPerCPUSecond / best
		}
	}
}
