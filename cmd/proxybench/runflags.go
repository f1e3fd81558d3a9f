package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/settings"
)

type runFlags struct {
	targets, testid, profile string
	load                     scenarios.Profile // the profile's figures, with CONNECTIONS and STREAMS given
	extra                    []string
	timeout                  time.Duration // of each k6 run (runTimeout)
	client                   string        // CLIENT: runner.ClientNative or runner.ClientK6
}

var testidRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func parseRunFlags(fs *flag.FlagSet, args []string) (*runFlags, error) {
	f := &runFlags{}
	settingVar(fs, &f.targets, "targets", "TARGET", "")
	settingVar(fs, &f.testid, "testid", "TESTID", "")
	settingVar(fs, &f.profile, "profile", "PROFILE", "")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	f.extra = fs.Args()
	if f.testid == "" {
		f.testid = time.Now().Format("20060102-150405")
	}
	if !testidRE.MatchString(f.testid) {
		// as the scripts check it (scenarios/lib/config.js), before anything runs
		return nil, fmt.Errorf("TESTID %q: letters, digits, \".\", \"_\" or \"-\", 128 at most (it names the results folder)", f.testid)
	}
	var err error
	if f.load, err = scenarios.ProfileNamed(f.profile); err != nil {
		return nil, err
	}
	if err := settings.CheckKnobs(os.Getenv); err != nil {
		return nil, err
	}
	// the profile's connections and streams, as CONNECTIONS and STREAMS change them: what the
	// scripts will run with, read once here
	for k, v := range map[string]*int{"CONNECTIONS": &f.load.Connections, "STREAMS": &f.load.Streams} {
		if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv(k))); err == nil {
			*v = n
		}
	}
	// the scripts would aim at TARGET_URL while the runner counts, samples and names the local
	// target: only k6-cloud's MODE=cloud (which runs no local target) takes it
	if u := os.Getenv("TARGET_URL"); u != "" && fs.Name() != "k6-cloud" {
		return nil, fmt.Errorf("TARGET_URL=%s: make %s measures the targets of the local stack; a remote target runs as `bin/k6 run -e TARGET_URL=%s scenarios/<scenario>.js` or `make k6-cloud MODE=cloud`", u, fs.Name(), u)
	}
	if f.timeout, err = runTimeout(os.Getenv); err != nil {
		return nil, err
	}
	if f.client, err = runner.ParseClient(os.Getenv("CLIENT")); err != nil {
		return nil, err
	}
	return f, nil
}

// runSlack is how long a k6 run may take beyond its WARMUP and DURATION before RUN_TIMEOUT
// cuts it off: setup (30 s at most), the 30 s gracefulStop, a fresh run's REQUESTS at the
// slowest rate seen here (50,000 handshakes at ~650/s in stress) and the summary, with room.
const runSlack = 5 * time.Minute

// runTimeout is RUN_TIMEOUT, the time after which a k6 run is stopped as hung ("0": never);
// empty is runSlack plus the DURATION and WARMUP given, which the profiles' own fit within.
func runTimeout(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv("RUN_TIMEOUT"))
	switch {
	case v == "":
		d := runSlack
		for _, k := range settings.Knobs(settings.Duration) {
			if w := strings.TrimSpace(getenv(k)); settings.DurationRE.MatchString(w) {
				d += time.Duration(settings.Seconds(w) * float64(time.Second))
			}
		}
		return d, nil
	case settings.ZeroRE.MatchString(v):
		return 0, nil
	case !settings.DurationRE.MatchString(v) || settings.Seconds(v) <= 0:
		return 0, fmt.Errorf("RUN_TIMEOUT=%q: want a duration such as 90s or 10m after which a k6 run is stopped as hung, or 0 for never (empty: %v plus DURATION and WARMUP)", v, runSlack)
	}
	return time.Duration(settings.Seconds(v) * float64(time.Second)), nil
}

// parseFlags parses args as fs's flags. The flag package prints its own complaint and every
// flag's usage to stderr, above the error main prints last; instead the error alone says what
// is wrong and, for a flag fs does not know, which flags it does.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(os.Stderr)
		fs.PrintDefaults()
		return err
	case strings.HasPrefix(err.Error(), "flag provided but not defined"):
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, "-"+f.Name) })
		return fmt.Errorf("%w: valid flags are %s; k6's own flags go after -- (make: ARGS='…')", err, strings.Join(names, ", "))
	case strings.HasPrefix(err.Error(), "invalid boolean value"):
		return fmt.Errorf("%w: want true or false", err)
	}
	return err
}
