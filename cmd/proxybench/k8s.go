package main

// `make k8s`: one scenario as a k6-operator TestRun split PARALLELISM ways, with the ConfigMap
// holding its k6 archive (package k8s). Here: the flags and the environment, checked as
// `make k6` checks them, then the package writes the files.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/k8s"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/settings"
)

type k8sFlags struct {
	k8s.Settings
	out, client string
}

// parseK8sFlags reads and checks everything `make k8s` is given, before k6 runs; every error
// names the variable at fault, and all of them are reported at once.
func parseK8sFlags(args []string) (*k8sFlags, error) {
	fs := flag.NewFlagSet("k8s", flag.ContinueOnError)
	f := &k8sFlags{}
	s := &f.Settings
	var parallelism string
	settingVar(fs, &s.Scenario, "scenario", "SCENARIO", "")
	settingVar(fs, &parallelism, "parallelism", "PARALLELISM", "")
	settingVar(fs, &s.Image, "image", "IMAGE", "")
	settingVar(fs, &s.TargetURL, "target-url", "TARGET_URL", "")
	settingVar(fs, &s.Target, "target", "TARGET", "")
	settingVar(fs, &s.InfluxURL, "influxdb-url", "INFLUXDB_URL", "")
	settingVar(fs, &s.Proto, "proto", "PROTO", "")
	settingVar(fs, &s.Profile, "profile", "PROFILE", "")
	settingVar(fs, &s.TestID, "testid", "TESTID", "")
	fs.BoolVar(&s.Separate, "separate", false, "one runner per node (spec.separate): no two runners share a node's CPUs")
	fs.StringVar(&f.out, "out", "", "directory for the manifests (default: run/k8s/<testid>/<scenario>[-<proto>])")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: k8s takes flags only (the k6 arguments it writes are in the TestRun)", fs.Args())
	}
	s.Scenario, s.Proto = strings.TrimSpace(s.Scenario), strings.TrimSpace(s.Proto)
	s.Image, s.TargetURL = strings.TrimSpace(s.Image), strings.TrimSpace(s.TargetURL)
	s.Target, s.InfluxURL = strings.TrimSpace(s.Target), strings.TrimSpace(s.InfluxURL)
	if s.Target == "all" {
		s.Target = "" // the Makefile's default for `make k6`, not a name
	}
	if s.TestID == "" {
		s.TestID = time.Now().Format("20060102-150405")
	}

	var errs []error
	if s.Scenario == "" {
		errs = append(errs, errors.New("no SCENARIO: try `make k8s SCENARIO=reused-h2 …`; scenarios are "+strings.Join(engine.Scenarios(), ", ")))
	} else if _, err := k6Cells(s.Scenario, s.Proto); err != nil {
		errs = append(errs, err)
	}
	if n, err := strconv.ParseUint(strings.TrimSpace(parallelism), 10, 64); err != nil || !settings.CountRE.MatchString(strings.TrimSpace(parallelism)) || n < 1 || n > k8s.MaxParallelism {
		errs = append(errs, fmt.Errorf("PARALLELISM=%q: want a whole number of at least 1 (the k6 runners the test is split over; at most %d)", parallelism, k8s.MaxParallelism))
	} else {
		s.Parallelism = int(n)
	}
	if err := s.Check(); err != nil {
		errs = append(errs, err)
	}
	if _, err := scenarios.ProfileNamed(s.Profile); err != nil {
		errs = append(errs, err)
	}
	if !testidRE.MatchString(s.TestID) {
		errs = append(errs, fmt.Errorf("TESTID %q: letters, digits, \".\", \"_\" or \"-\", 128 at most", s.TestID))
	}
	if err := settings.CheckKnobs(os.Getenv); err != nil {
		errs = append(errs, err)
	}
	var err error
	if f.client, err = runner.ParseClient(os.Getenv("CLIENT")); err != nil {
		errs = append(errs, err)
	}
	return f, errors.Join(errs...)
}

func cmdK8s(ctx context.Context, args []string) error {
	f, err := parseK8sFlags(args)
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join(envPath("PROXYBENCH_RUN", filepath.Join(root, "run")), "k8s", f.TestID, f.Cell())
	}
	// split over runners (execution segments), a fresh cell runs its k6/http script (runner.Script)
	r := &runner.Runner{ScenariosDir: filepath.Join(root, "scenarios"), Client: f.client, Segments: f.Parallelism}
	script, err := r.Script(f.Scenario)
	if err != nil {
		return err
	}
	w, err := k8s.Write(ctx, k8s.Job{
		Settings: f.Settings,
		K6:       archiverK6(envOr("K6", filepath.Join(root, "bin", "k6"))),
		Script:   script, ScenariosDir: r.ScenariosDir, Dir: dir,
		Env: f.RunnerEnv(os.Getenv),
	})
	if err != nil {
		return err
	}
	fmt.Printf("k8s: %s split %d ways against %s (testid %s, %d VUs at most, archive %d bytes)\n", f.Cell(), f.Parallelism, f.TargetURL, f.TestID, w.MaxVUs, w.ArchiveBytes)
	fmt.Printf("  %s/configmap.yaml  the k6 archive (ConfigMap %s)\n  %s/testrun.yaml    the TestRun (image %s)\n", dir, w.Name, dir, f.Image)
	fmt.Printf("apply both: kubectl apply -f %s/   follow: kubectl get testrun %s -w\n", dir, w.Name)
	if f.InfluxURL == "" {
		fmt.Printf("no INFLUXDB_URL: each runner's summary is in its own log only, which cleanup: post deletes with the pods at the end (follow them: kubectl logs -f -l k6_cr=%s,runner=true --prefix); give INFLUXDB_URL to see the split run as one in the dashboards\n", w.Name)
	}
	return nil
}

// archiverK6 is the k6 at path as k8s.Write runs it: with this machine's PATH and HOME only,
// inspecting its archive from the temporary folder.
func archiverK6(path string) k8s.K6 {
	return k8s.K6{
		Path:      path,
		Env:       []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")},
		Elsewhere: os.TempDir(),
	}
}
