package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/runner"
)

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
	protos := setting(fs, "protos", "PROTOS", "")
	modes := setting(fs, "modes", "MODES", "")
	seconds := fs.Int("seconds", 10, "how long each client runs, in seconds (fresh: wrk's runs)")
	requests := fs.Int("requests", 10000, "fresh: requests, each on a new connection (k6's REQUESTS, h2load's -n)")
	conns := fs.Int("connections", 32, "connections, the same for every client")
	streams := fs.Int("streams", 16, "h2: concurrent streams per connection, the same for every client")
	rounds := fs.Int("rounds", 1, "rounds: each runs every client once per target and protocol, in turn (ROUNDS)")
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
	if c.protos, err = listFlag("PROTOS", *protos, engine.CalibrateProtos); err != nil {
		return nil, err
	}
	if c.modes, err = listFlag("MODES", *modes, engine.CalibrateModes); err != nil {
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
	if err := engine.PeersInstalled(); err != nil {
		return err
	}
	rs, err := remoteOf(ctx, s)
	if err != nil {
		return err
	}
	var h *held
	cfg := engine.TargetConfig(s)
	if rs != nil {
		if names, err = remoteTargets(rs, s, f.targets); err != nil {
			return err
		}
		names = withBaseline(names)
		h, err = holdRemote(rs, s, f.runFlags)
		cfg = rs.Config
	} else {
		names = withBaseline(names)
		h, err = hold(ctx, s, "calibrate", names, f.runFlags)
	}
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.down()) }()
	// the client's ceiling is the load host's: it is kept in this host's run directory
	c := &engine.Calibration{
		TestID: f.testid, Dir: h.dir, RunDir: s.RunDir, Config: cfg, Runner: h.r, Served: h.sv, PIDs: map[string]int{},
		Targets: names, Protos: f.protos, Modes: f.modes, Clients: f.clients,
		Seconds: f.seconds, Requests: f.requests, Connections: f.connections, Streams: f.streams, Rounds: f.rounds,
		Stdout: os.Stdout,
	}
	for n, t := range h.st.Targets {
		c.PIDs[n] = t.PID
	}
	return c.Run(ctx)
}
