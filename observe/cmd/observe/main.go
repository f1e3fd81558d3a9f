// Command observe starts and stops the native InfluxDB the Makefile's OBSERVE=1, observe-up and
// observe-down use, and tells k6 how to reach it.
//
//	observe up      start InfluxDB on $INFLUXDB_ADDR (127.0.0.1:8086), data in run/influxdb, database k6
//	observe down    stop it, by pid (the data stays)
//	observe status  is it up, where
//	observe env     K6_OUT=proxybench-influxdb K6_INFLUXDB_ADDR=… K6_INFLUXDB_BUCKET=k6 when it is up, nothing otherwise
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/proxybench/proxybench/observe"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: observe up|down|status|env")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "up":
		err = up(ctx)
	case "down":
		err = down()
	case "status":
		err = status()
	case "env":
		err = env()
	default:
		err = fmt.Errorf("unknown command %q: up, down, status or env", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "observe "+os.Args[1]+": "+err.Error())
		os.Exit(1)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func runDir() string {
	d := envOr("PROXYBENCH_RUN", "run")
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

func cacheDir() (string, error) {
	if c := os.Getenv("PROXYBENCH_CACHE"); c != "" {
		return c, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("set PROXYBENCH_CACHE: no home directory for the default cache")
	}
	return filepath.Join(home, ".cache", "proxybench"), nil
}

// running is the state of an InfluxDB that is still up, or nil.
func running() (*observe.State, error) {
	st, err := observe.LoadState(runDir())
	if err != nil || st == nil || !st.Alive() {
		return nil, err
	}
	return st, nil
}

func up(ctx context.Context) error {
	if st, err := running(); err != nil {
		return err
	} else if st != nil {
		fmt.Printf("influxdb already up  pid %-7d %s\n", st.PID, st.URL())
		return nil
	}
	cache, err := cacheDir()
	if err != nil {
		return err
	}
	bin, err := observe.Binary(cache)
	if err != nil {
		return err
	}
	addr := strings.TrimPrefix(envOr("INFLUXDB_ADDR", observe.DefaultAddr), "http://")
	bucket := envOr("INFLUXDB_BUCKET", observe.DefaultBucket)
	t0 := time.Now()
	s, err := observe.Start(ctx, bin, filepath.Join(runDir(), "influxdb"), addr, bucket)
	if err != nil {
		return err
	}
	st := &observe.State{Server: *s, Bucket: bucket}
	if err := st.Save(runDir()); err != nil {
		_ = s.Stop(10 * time.Second)
		return err
	}
	fmt.Printf("influxdb up   pid %-7d %-22s ready in %v  (%s, database %s, data in %s)\n", s.PID,
		"influxdb "+observe.Version, time.Since(t0).Round(time.Millisecond), s.URL(), bucket, s.Dir)
	return nil
}

func down() error {
	st, err := observe.LoadState(runDir())
	if err != nil || st == nil {
		return err
	}
	if err := st.Stop(15 * time.Second); err != nil {
		return fmt.Errorf("influxdb: %w", err)
	}
	fmt.Printf("influxdb down (pid %d; data kept in %s)\n", st.PID, st.Dir)
	return os.Remove(observe.StatePath(runDir()))
}

func status() error {
	st, err := running()
	if err != nil {
		return err
	}
	if st == nil {
		fmt.Println("influxdb not running (make observe-up, or make up OBSERVE=1)")
		return nil
	}
	health := "healthy"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := observe.Ping(ctx, st.URL()); err != nil {
		health = "not answering: " + err.Error()
	}
	fmt.Printf("influxdb %s  pid %-7d %s  database %s  %s\n", observe.Version, st.PID, st.URL(), st.Bucket, health)
	return nil
}

func env() error {
	st, err := running()
	if err != nil || st == nil {
		return err
	}
	fmt.Println(strings.Join(st.K6Env(), " "))
	return nil
}
