package engine

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proxybench/proxybench/internal/calibrate"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// CalibrateProtos are the protocols a calibration measures: those with a native peer
// (calibrate.Peers), and CalibrateModes the connection patterns.
var (
	CalibrateProtos = []string{"h1c", "h1", "h2"}
	CalibrateModes  = []string{"reused", "fresh", "open"}
	// ceilingProtos are those the native open model runs (equal load's h3 runs k6's batches).
	ceilingProtos = []string{"h1c", "h1", "h2"}
)

// ceilingSeconds is how long each rate of the open-model ladder runs: short, as it climbs
// through several.
const ceilingSeconds = 3

// Calibration is `make calibrate`: every k6 client and the native peers (wrk, h2load) on the
// same load against each target, round after round, then the client's open-model ceiling
// against direct (make bench's equal-load rate never exceeds it).
type Calibration struct {
	TestID                 string
	Dir                    string // the results folder: calibrate.json
	RunDir                 string // the stack's: CeilingFile
	Config                 *stack.Config
	Runner                 *runner.Runner
	Served                 Served
	PIDs                   map[string]int
	Targets, Protos, Modes []string
	Clients                []string // k6's clients: native, k6
	Seconds, Requests      int
	Connections, Streams   int
	Rounds                 int
	Stdout                 io.Writer
	rows                   []*calibrate.Calibration
	ceilings               []*calibrate.Ceiling
}

// Run runs every round, then the ladder, prints both and saves them; its error lists every
// client run that measured nothing.
func (c *Calibration) Run(ctx context.Context) error {
	for round := 1; round <= c.Rounds; round++ {
		for _, mode := range c.Modes {
			if mode == "open" {
				continue // one ladder, after the rounds
			}
			for _, proto := range c.Protos {
				for _, t := range c.Targets {
					if !c.Served.Serves(t, proto) {
						continue
					}
					load := CalibrationLoad(c.Config, t, proto, c.Connections, c.Streams, c.Seconds)
					load.Fresh, load.Requests = mode == "fresh", c.Requests
					j := runner.Job{Target: t, Proto: proto, Run: round, Env: load.K6Env()}
					c.rows = append(c.rows, calibrate.Run(ctx, c.Runner, c.TestID, j, load, c.PIDs[t], c.Clients)...)
				}
			}
		}
	}
	if slices.Contains(c.Modes, "open") {
		for _, proto := range c.Protos {
			if slices.Contains(ceilingProtos, proto) && ctx.Err() == nil {
				c.ceilings = append(c.ceilings, calibrate.OpenCeiling(ctx, c.Runner, c.TestID+"-ceiling", stack.Direct, proto, c.PIDs[stack.Direct], ceilingSeconds, c.Connections))
			}
		}
	}
	calibrate.SetVsPeer(c.rows)
	c.print()
	if len(c.ceilings) > 0 {
		printCeilings(c.Stdout, c.ceilings)
		if err := stack.WriteJSON(filepath.Join(c.RunDir, CeilingFile), c.ceilings); err != nil {
			return err
		}
	}
	path := filepath.Join(c.Dir, "calibrate.json")
	if err := stack.WriteJSON(path, map[string]any{
		"testid": c.TestID, "seconds": c.Seconds, "connections": c.Connections,
		"streams": c.Streams, "rounds": c.Rounds, "runs": c.rows, "ceilings": c.ceilings,
	}); err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "\ncalibrate: %s\n", path)
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: the runs before it are in %s", path)
	}
	var failed []string
	for _, r := range c.rows {
		if r.Err != "" {
			failed = append(failed, fmt.Sprintf("%s %s %s: %s", r.Client, r.Proto, r.Target, r.Err))
		}
	}
	for _, r := range c.ceilings {
		if r.Err != "" {
			failed = append(failed, fmt.Sprintf("open-model ceiling %s: %s", r.Proto, r.Err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d client run(s) measured nothing:\n  %s", len(failed), strings.Join(failed, "\n  "))
	}
	return nil
}

// BenchCalibration measures the client's ceiling before a bench's matrix: the client the matrix
// runs with and the native peers on the same short load against direct, for each protocol
// of the bench that has a peer. Its k6 results go to a folder of their own
// (<testid>-calibrate), out of the bench's cells.
func BenchCalibration(ctx context.Context, r *runner.Runner, c *stack.Config, sv Served, pid int, testid string, protos []string, client string, conns, streams, seconds int) []*calibrate.Calibration {
	var rows []*calibrate.Calibration
	for _, p := range CalibrateProtos {
		if !slices.Contains(protos, p) || !sv.Serves(stack.Direct, p) || ctx.Err() != nil {
			continue
		}
		load := CalibrationLoad(c, stack.Direct, p, conns, streams, seconds)
		j := runner.Job{Target: stack.Direct, Proto: p, Run: 1, Env: load.K6Env()}
		rows = append(rows, calibrate.Run(ctx, r, testid+"-calibrate", j, load, pid, []string{client})...)
	}
	calibrate.SetVsPeer(rows)
	return rows
}

// CalibrationLoad is the load every client of a calibration gets against target t over proto:
// the reused scenarios' route, on the target's TLS port or, for h1c, its cleartext one.
func CalibrationLoad(c *stack.Config, t, proto string, conns, streams, seconds int) calibrate.PeerLoad {
	port := c.Targets[t].TLS
	if proto == "h1c" {
		port = c.Targets[t].H1C
	}
	return calibrate.PeerLoad{
		Addr: c.Address, Host: c.Hostname, Port: port, Route: "/",
		Connections: conns, Streams: streams, Duration: time.Duration(seconds) * time.Second,
	}
}

// PeersInstalled tells whether the native peers can run, else says how to install them.
func PeersInstalled() error {
	for _, p := range []string{"wrk", "h2load"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s is not installed: run internal/calibrate/install-peers.sh (make calibrate and make bench do)", p)
		}
	}
	return nil
}

func (c *Calibration) print() {
	w := c.Stdout
	fmt.Fprintf(w, "\n== client calibration: %d connections, h2 %d streams each, %d s per client; fresh: %d requests (k6-native: at least, and on until %d s)  (testid %s)\n",
		c.Connections, c.Streams, c.Seconds, c.Requests, c.Seconds, c.TestID)
	fmt.Fprintf(w, "%8s %6s %6s %9s %6s %10s %9s %16s %17s %16s %9s\n", "target", "mode", "proto", "client", "round",
		"requests", "req/s", "client CPU-µs/req", "req/client CPU-s", "target CPU-µs/req", "vs peer")
	for _, r := range c.rows {
		vs := ""
		if r.VsPeer > 0 {
			vs = fmt.Sprintf("%.2f", r.VsPeer)
		}
		if r.Err != "" {
			fmt.Fprintf(w, "%8s %6s %6s %9s %6d  %s\n", r.Target, r.Mode, r.Proto, r.Client, r.Round, r.Err)
			continue
		}
		fmt.Fprintf(w, "%8s %6s %6s %9s %6d %10.0f %9.0f %16.1f %17.0f %16.1f %9s\n", r.Target, r.Mode, r.Proto, r.Client, r.Round,
			r.Requests, r.RPS, r.ClientCPUMicros, r.ReqPerCPUSecond, r.TargetCPUMicros, vs)
	}
	fmt.Fprintln(w, "vs peer: k6's requests per client CPU-second over the most frugal native peer's (1: as cheap as wrk/h2load).")
	fmt.Fprintln(w, "k6-native: our Go load loop (scenarios/native/, what make bench runs); k6-http: the k6/http scripts (CLIENT=k6). h3: no native peer installs here.")
}

// printCeilings prints the open-model ladder: the rates tried and the highest held.
func printCeilings(w io.Writer, cs []*calibrate.Ceiling) {
	fmt.Fprintf(w, "\n== the client's open-model ceiling against direct (native loop, %d s per rate; held: valid, on schedule, p99 within %d× the unloaded p99)\n",
		ceilingSeconds, calibrate.CeilingP99Factor)
	for _, c := range cs {
		if c.Err != "" {
			fmt.Fprintf(w, "%5s  %s\n", c.Proto, c.Err)
			continue
		}
		var steps []string
		for _, st := range c.Steps {
			mark := "held"
			if !st.Held {
				mark = "not held: " + st.Why
			}
			steps = append(steps, fmt.Sprintf("%d req/s p99 %.3f ms %s", st.Rate, st.P99, mark))
		}
		fmt.Fprintf(w, "%5s  unloaded p99 %.3f ms; ceiling %d req/s\n       %s\n", c.Proto, c.UnloadedP99, c.Rate, strings.Join(steps, "\n       "))
	}
	fmt.Fprintf(w, "make bench runs equal load at the lower of half the slowest target's reused req/s and this ceiling (kept in run/%s).\n", CeilingFile)
}
