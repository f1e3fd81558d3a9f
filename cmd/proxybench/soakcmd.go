package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/soak"
	"github.com/proxybench/proxybench/stack"
)

type soakFlags struct {
	*runFlags
	target   string
	minutes  float64
	proto    string
	interval time.Duration
	check    bool
}

func (f *soakFlags) duration() string { return soak.Duration(f.minutes) }

// parseSoakFlags reads the flags, each defaulting to the variable make exports for it.
func parseSoakFlags(args []string) (*soakFlags, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	target := fs.String("target", os.Getenv("TARGET"), "the one target to soak: a name of targets.json, or direct (TARGET)")
	minutes := setting(fs, "minutes", "MINUTES", strconv.Itoa(soak.DefaultMinutes))
	proto := setting(fs, "proto", "PROTO", "h1c")
	interval := setting(fs, "interval", "SOAK_INTERVAL", soak.DefaultInterval.String())
	check := fs.Bool("check", false, "check the flags and the target, then exit (make soak does, before building)")
	f, err := parseRunFlags(fs, args)
	if err != nil {
		return nil, err
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if given["targets"] {
		return nil, errors.New("soak runs against one target: -target NAME (make soak TARGET=NAME), not -targets")
	}
	if given["profile"] && f.profile != "stress" {
		return nil, fmt.Errorf("soak runs the stress profile only, not -profile %s: leave -profile out", f.profile)
	}
	f.profile = "stress"
	sf := &soakFlags{runFlags: f, check: *check, target: strings.TrimSpace(*target)}
	switch {
	case sf.target == "" || sf.target == "all":
		return nil, fmt.Errorf("soak needs one target, got %q: TARGET=NAME, a name of targets.json or direct (the upstream alone); all is not one", sf.target)
	case strings.Contains(sf.target, ","):
		return nil, fmt.Errorf("soak runs against one target, got the list %q: TARGET=NAME, a name of targets.json or direct", sf.target)
	}
	f.targets = sf.target
	if sf.minutes, err = soak.ParseMinutes(*minutes); err != nil {
		return nil, err
	}
	if sf.proto = strings.TrimSpace(*proto); !slices.Contains(allProtos, sf.proto) {
		return nil, fmt.Errorf("unknown PROTO %q: valid are %s (soak runs reused-<proto>; empty: h1c)", sf.proto, strings.Join(allProtos, ", "))
	}
	if sf.interval, err = soak.ParseInterval(*interval, *minutes); err != nil {
		return nil, err
	}
	// RUN_TIMEOUT's default counts the DURATION k6 is given: the soak's, not the environment's
	if f.timeout, err = runTimeout(func(k string) string {
		if k == "DURATION" {
			return sf.duration()
		}
		return os.Getenv(k)
	}); err != nil {
		return nil, err
	}
	if d := strings.TrimSpace(os.Getenv("DURATION")); d != "" {
		fmt.Fprintf(os.Stderr, "soak: DURATION=%s is not used: the measured load runs for MINUTES (%s)\n", d, sf.duration())
	}
	return sf, nil
}

// cmdSoak checks the target, brings it and the upstream up, soaks it and brings them down.
func cmdSoak(ctx context.Context, args []string) (err error) {
	f, err := parseSoakFlags(args)
	if err != nil {
		return err
	}
	s, _, err := stackOf(f.target)
	if err != nil {
		return err
	}
	if f.target != stack.Direct {
		// refused before anything starts; the stack's own verification says it again below
		defs, err := s.Definitions([]string{f.target})
		if err != nil {
			return err
		}
		if ps := defs[f.target].Protocols; !slices.Contains(ps, f.proto) {
			return fmt.Errorf("%s does not serve %s: PROTO is one of what it serves, %s", f.target, f.proto, strings.Join(ps, ", "))
		}
	}
	if f.check {
		return nil
	}
	// the upstream: every proxy forwards to it, and it is measured too
	names := []string{stack.Direct}
	if f.target != stack.Direct {
		names = append(names, f.target)
	}
	h, err := hold(ctx, s, "soak", names, f.runFlags)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.down()) }()
	if how := h.sv.Missing[f.target]; how != "" {
		return fmt.Errorf("%s is not up: %s", f.target, how)
	}
	if ps := h.sv.Protocols[f.target]; !slices.Contains(ps, f.proto) {
		return fmt.Errorf("%s does not serve %s: PROTO is one of what it serves, %s", f.target, f.proto, strings.Join(ps, ", "))
	}
	return soak.Run(ctx, h.r, soak.Plan{
		TestID: f.testid, Target: f.target, Proto: f.proto, Minutes: f.minutes, Interval: f.interval,
		TargetPID: h.st.Targets[f.target].PID, UpstreamPID: h.st.Targets[stack.Direct].PID,
		Dir: h.dir, Out: os.Stdout, Progress: os.Stderr,
	})
}
