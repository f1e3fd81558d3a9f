// Command proxybench is what the Makefile calls: it installs, starts and stops the native stack
// and runs the scenarios against its targets.
//
//	proxybench setup     [-targets all]
//	proxybench pins                             (every pin against its registry: what an install takes today)
//	proxybench up        [-targets all] [-pin SPEC]
//	proxybench down
//	proxybench status                           (STACK=https://IP:PORT: a stack on another host, through its agent; k6, bench, calibrate too)
//	proxybench k6        -scenario NAME [-targets all] [-proto h1|h1c|h2|h3] [-segments N] [-profile smoke] [-testid ID] [-- k6 flags]
//	proxybench k6-cloud  -scenario NAME -mode local|cloud [-target-url URL] [-proto P] [-- k6 flags]
//	proxybench k8s       -scenario NAME -parallelism N -image REF -target-url URL [-target NAME] [-influxdb-url URL] [-proto P] [-out DIR]
//	proxybench k8s-up    [-node]                (a Kubernetes control plane and the k6-operator on loopback: run/k8s/cluster; -node: a kubelet too)
//	proxybench k8s-run   -scenario NAME [-targets all] [-parallelism 2] [-proto P] [-profile smoke] [-testid ID] [-- k6 flags]
//	proxybench k8s-down
//	proxybench bench     [-targets all] [-profile smoke] [-protos h1,h1c,h2,h3] [-modes reused,fresh,probe]
//	                     [-runs N] [-dashboard] [-restart] [-pin SPEC] [-calibrate-seconds 3] [-check] [-testid ID] [-- k6 flags]
//	proxybench calibrate [-targets nginx] [-protos h1c,h1,h2] [-modes …] [-seconds 10] [-connections 32] [-streams 16] [-requests N] [-rounds 1] [-check]
//	proxybench soak      -target NAME [-minutes 10] [-proto h1c|h1|h2|h3] [-interval 10s] [-check] [-testid ID] [-- k6 flags]
//	proxybench table     results/ID
//	proxybench report    results/ID
//	proxybench compare   results/A results/B
//	proxybench certs                            (compose.yaml: the shared certificates)
//	proxybench exec      TARGET                 (compose.yaml: one target in the foreground)
//	proxybench health    [-timeout 2s] TARGET   (compose.yaml's healthchecks)
//	proxybench attach    [-targets all]         (after `docker compose up`: verify and adopt its stack)
//	proxybench settings  [-markdown]            (every setting: make help's list, SETTINGS.md's table)
//	proxybench agent     -listen IP:PORT        (the stack served to a load host over HTTPS: agent/README.md)
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/proxybench/proxybench/settings"
	"github.com/proxybench/proxybench/stack"
)

var commands = map[string]func(ctx context.Context, args []string) error{
	"setup":     cmdSetup,
	"up":        cmdUp,
	"down":      cmdDown,
	"status":    cmdStatus,
	"k6":        cmdK6,
	"k6-cloud":  cmdK6Cloud, // cloud.go
	"bench":     cmdBench,
	"soak":      cmdSoak,
	"calibrate": cmdCalibrate,
	"table":     cmdTable,
	"pins":      cmdPins,
	"report":    cmdReport, "compare": cmdCompare, // reportcmds.go
	"certs": cmdCerts, "exec": cmdExec, "health": cmdHealth, "attach": cmdAttach, // the compose engine
	"k8s":      cmdK8s,    // k8s.go: a k6-operator TestRun and its ConfigMap
	"k8s-up":   cmdK8sUp,  // k8scluster.go: a control plane and the operator on loopback
	"k8s-run":  cmdK8sRun, // k8srun.go: a cell split over the operator's runners on our node
	"k8s-down": cmdK8sDown,
	"settings": cmdSettings, // settingscmd.go: every setting (make help), -markdown SETTINGS.md's table
	"agent":    cmdAgent,    // agentcmd.go: the stack served to a load host over HTTPS
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: proxybench setup|pins|up|down|status|k6|k6-cloud|k8s|k8s-up|k8s-down|bench|soak|calibrate|table|report|compare|certs|exec|health|attach|settings|agent [flags] (see `make help`)")
		os.Exit(2)
	}
	if err := loadDotEnv(".env"); err != nil {
		fmt.Fprintln(os.Stderr, "proxybench "+os.Args[1]+": "+err.Error())
		os.Exit(2)
	}
	// every process the commands start (the stack's, k6) may hold as many files as allowed
	if err := stack.RaiseOpenFiles(); err != nil {
		fmt.Fprintln(os.Stderr, "proxybench "+os.Args[1]+": warning: "+err.Error())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := commands[os.Args[1]](ctx, os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "proxybench "+os.Args[1]+": "+err.Error())
		os.Exit(1)
	}
}

// loadDotEnv fills in from path (.env) what the environment does not set, as make's
// `-include .env` does, so that bin/proxybench run by hand takes the settings `make` would:
// flags first, then the environment, then .env, then the profile.
func loadDotEnv(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	vals, err := settings.DotEnv(f, path)
	if err != nil {
		return err
	}
	for k, v := range vals {
		if _, set := os.LookupEnv(k); !set {
			if err := os.Setenv(k, v); err != nil {
				return fmt.Errorf("%s: %s: %w", path, k, err)
			}
		}
	}
	return nil
}

// paths come from the environment so that tests can run a second, isolated stack.
func paths() (stack.Paths, error) {
	root, err := os.Getwd()
	if err != nil {
		return stack.Paths{}, err
	}
	cache, err := stack.CacheDir()
	if err != nil {
		return stack.Paths{}, err
	}
	return stack.Paths{
		Root:        root,
		TargetsFile: envPath("TARGETS_FILE", filepath.Join(root, "targets.json")),
		RunDir:      envPath("PROXYBENCH_RUN", filepath.Join(root, "run")),
		CacheDir:    cache,
		Proxies:     envPath("PROXYBENCH_PROXIES", ""),
	}, nil
}

// envOr is the environment's value of key, trimmed (a value from .env may carry spaces), or def.
func envOr(key, def string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return def
}

// envPath is envOr for a path, made absolute: k6 and the proxies run in other directories.
func envPath(key, def string) string {
	v := envOr(key, def)
	if abs, err := filepath.Abs(v); err == nil && v != "" {
		return abs
	}
	return v
}

func newStack() (*stack.Stack, error) {
	p, err := paths()
	if err != nil {
		return nil, err
	}
	return stack.New(p, envOr(stack.TLSProfileEnv, ""), os.Stdout)
}

// stackOf is the stack and the targets TARGETS names ("all", or a comma-separated list), or why
// they cannot be: an unknown name, a broken targets.json.
func stackOf(targets string) (*stack.Stack, []string, error) {
	s, err := newStack()
	if err != nil {
		return nil, nil, err
	}
	names, err := s.Config.Select(targets)
	if err != nil {
		return nil, nil, err
	}
	return s, names, nil
}
