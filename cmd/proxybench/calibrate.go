package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// calibrateProtos are the protocols calibrate measures: those with a native peer (runner.Peers),
// and calibrateModes the connection patterns.
var (
	calibrateProtos = []string{"h1c", "h1", "h2"}
	calibrateModes  = []string{"reused", "fresh", "open"}
	// ceilingProtos are those the native open model runs (equal load's h2 and h3 run k6's
	// batches).
	ceilingProtos = []string{"h1c", "h1"}
)

// ceilingFile is where `make calibrate` keeps the client's open-model ceilings for the bench's
// equal-load pass, beside the stack's other state.
const ceilingFile = "ceiling.json"

type calibrateFlags struct {
	*runFlags
	protos, modes        []string
	seconds, requests    int
	connections, streams int
	rounds               int
	clients              []string // k6's: CLIENT, or both when it is not set
	check                bool
}

func parseCalibrateFlags(args []string) (*calibrateFlags, error) {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	protos := fs.String("protos", envOr("PROTOS", "all"), "protocols: all or a comma-separated list of "+strings.Join(calibrateProtos, ", ")+" (h3 has no native peer here)")
	modes := fs.String("modes", envOr("MODES", "all"), "connection patterns: all or a comma-separated list of "+strings.Join(calibrateModes, ", ")+" (open: the highest equal-load rate the client holds against direct)")
	seconds := fs.Int("seconds", 10, "how long each client runs, in seconds (fresh: wrk's runs)")
	requests := fs.Int("requests", 10000, "fresh: requests, each on a new connection (k6's REQUESTS, h2load's -n)")
	conns := fs.Int("connections", 32, "connections, the same for every client")
	streams := fs.Int("streams", 16, "h2: concurrent streams per connection, the same for every client")
	rounds := fs.Int("rounds", 1, "rounds: each runs every client once per target and protocol, in turn")
	check := fs.Bool("check", false, "check the flags and targets, then exit")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return nil, err
	}
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "targets" })
	if !given && strings.TrimSpace(os.Getenv("TARGET")) == "" {
		f.targets = "nginx" // and direct, as always: the upstream alone and one proxy
	}
	c := &calibrateFlags{runFlags: f, seconds: *seconds, requests: *requests, connections: *conns, streams: *streams, rounds: *rounds, check: *check}
	if c.protos, err = listFlag("PROTOS", *protos, calibrateProtos); err != nil {
		return nil, err
	}
	if c.modes, err = listFlag("MODES", *modes, calibrateModes); err != nil {
		return nil, err
	}
	c.clients = []string{runner.ClientNative, runner.ClientK6}
	if strings.TrimSpace(os.Getenv("CLIENT")) != "" {
		c.clients = []string{f.client}
	}
	for _, n := range []struct {
		name      string
		v, lo, hi int
	}{{"-seconds", c.seconds, 2, 600}, {"-requests", c.requests, 1, 1000000}, {"-connections", c.connections, 1, 10000}, {"-streams", c.streams, 1, 1000}, {"-rounds", c.rounds, 1, 20}} {
		if n.v < n.lo || n.v > n.hi {
			return nil, fmt.Errorf("%s %d: want a whole number from %d to %d", n.name, n.v, n.lo, n.hi)
		}
	}
	return c, nil
}

func cmdCalibrate(ctx context.Context, args []string) (err error) {
	f, err := parseCalibrateFlags(args)
	if err != nil {
		return err
	}
	s, names, err := stackOf(f.targets)
	if err != nil {
		return err
	}
	if f.check {
		return nil
	}
	if err := peersInstalled(); err != nil {
		return err
	}
	names = withBaseline(names)
	h, err := hold(ctx, s, "calibrate", names, f.runFlags)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.down()) }()
	st, sv, r := h.st, h.sv, h.r
	var rows []*runner.Calibration
	for round := 1; round <= f.rounds; round++ {
		for _, mode := range f.modes {
			if mode == "open" {
				continue // one ladder, after the rounds
			}
			for _, proto := range f.protos {
				for _, t := range names {
					if sv.missing[t] != "" || !slices.Contains(sv.protocols[t], proto) {
						continue
					}
					load := calibrationLoad(s.Config, t, proto, f.connections, f.streams, f.seconds)
					load.Fresh, load.Requests = mode == "fresh", f.requests
					j := runner.Job{Target: t, Proto: proto, Run: round, Env: load.K6Env()}
					rows = append(rows, r.Calibrate(ctx, f.testid, j, load, st.Targets[t].PID, f.clients)...)
				}
			}
		}
	}
	var ceilings []*runner.Ceiling
	if slices.Contains(f.modes, "open") {
		for _, proto := range f.protos {
			if slices.Contains(ceilingProtos, proto) && ctx.Err() == nil {
				ceilings = append(ceilings, r.OpenCeiling(ctx, f.testid+"-ceiling", stack.Direct, proto, st.Targets[stack.Direct].PID, ceilingSeconds, f.connections))
			}
		}
	}
	runner.SetVsPeer(rows)
	printCalibration(os.Stdout, rows, f)
	if len(ceilings) > 0 {
		printCeilings(os.Stdout, ceilings)
		if err := stack.WriteJSON(filepath.Join(s.RunDir, ceilingFile), ceilings); err != nil {
			return err
		}
	}
	path := filepath.Join(h.dir, "calibrate.json")
	if err := stack.WriteJSON(path, map[string]any{
		"testid": f.testid, "seconds": f.seconds, "connections": f.connections,
		"streams": f.streams, "rounds": f.rounds, "runs": rows, "ceilings": ceilings,
	}); err != nil {
		return err
	}
	fmt.Printf("\ncalibrate: %s\n", path)
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: the runs before it are in %s", path)
	}
	var failed []string
	for _, c := range rows {
		if c.Err != "" {
			failed = append(failed, fmt.Sprintf("%s %s %s: %s", c.Client, c.Proto, c.Target, c.Err))
		}
	}
	for _, c := range ceilings {
		if c.Err != "" {
			failed = append(failed, fmt.Sprintf("open-model ceiling %s: %s", c.Proto, c.Err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d client run(s) measured nothing:\n  %s", len(failed), strings.Join(failed, "\n  "))
	}
	return nil
}

// ceilingSeconds is how long each rate of the open-model ladder runs: short, as it climbs
// through several.
const ceilingSeconds = 3

// printCeilings prints the open-model ladder: the rates tried and the highest held.
func printCeilings(w io.Writer, cs []*runner.Ceiling) {
	fmt.Fprintf(w, "\n== the client's open-model ceiling against direct (native loop, %d s per rate; held: valid, on schedule, p99 within %d× the unloaded p99)\n",
		ceilingSeconds, runner.CeilingP99Factor)
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
	fmt.Fprintf(w, "make bench runs equal load at the lower of half the slowest target's reused req/s and this ceiling (kept in run/%s).\n", ceilingFile)
}

// calibrationLoad is the load every client of a calibration gets against target t over proto:
// the reused scenarios' route, on the target's TLS port or, for h1c, its cleartext one.
func calibrationLoad(c *stack.Config, t, proto string, conns, streams, seconds int) runner.PeerLoad {
	port := c.Targets[t].TLS
	if proto == "h1c" {
		port = c.Targets[t].H1C
	}
	return runner.PeerLoad{
		Addr: c.Address, Host: c.Hostname, Port: port, Route: "/",
		Connections: conns, Streams: streams, Duration: time.Duration(seconds) * time.Second,
	}
}

// peersInstalled tells whether calibrate's native peers can run, else says how to install them.
func peersInstalled() error {
	for _, p := range []string{"wrk", "h2load"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s is not installed: run runner/install-peers.sh (make calibrate and make bench do)", p)
		}
	}
	return nil
}

func printCalibration(w io.Writer, rows []*runner.Calibration, f *calibrateFlags) {
	fmt.Fprintf(w, "\n== client calibration: %d connections, h2 %d streams each, %d s per client; fresh: %d requests  (testid %s)\n",
		f.connections, f.streams, f.seconds, f.requests, f.testid)
	fmt.Fprintf(w, "%8s %6s %6s %9s %6s %10s %9s %16s %17s %16s %9s\n", "target", "mode", "proto", "client", "round",
		"requests", "req/s", "client CPU-µs/req", "req/client CPU-s", "target CPU-µs/req", "vs peer")
	for _, c := range rows {
		vs := ""
		if c.VsPeer > 0 {
			vs = fmt.Sprintf("%.2f", c.VsPeer)
		}
		if c.Err != "" {
			fmt.Fprintf(w, "%8s %6s %6s %9s %6d  %s\n", c.Target, c.Mode, c.Proto, c.Client, c.Round, c.Err)
			continue
		}
		fmt.Fprintf(w, "%8s %6s %6s %9s %6d %10.0f %9.0f %16.1f %17.0f %16.1f %9s\n", c.Target, c.Mode, c.Proto, c.Client, c.Round,
			c.Requests, c.RPS, c.ClientCPUMicros, c.ReqPerCPUSecond, c.TargetCPUMicros, vs)
	}
	fmt.Fprintln(w, "vs peer: k6's requests per client CPU-second over the most frugal native peer's (1: as cheap as wrk/h2load).")
	fmt.Fprintln(w, "k6-native: our Go load loop (scenarios/native/, what make bench runs); k6-http: the k6/http scripts (CLIENT=k6). h3: no native peer installs here.")
}
