// Command observe starts and stops the native InfluxDB the Makefile's OBSERVE=1, observe-up and
// observe-down use, and a Grafana beside it when one is installed, and tells k6 how to reach
// InfluxDB.
//
//	observe up      start InfluxDB on $INFLUXDB_ADDR (127.0.0.1:8086), data in run/influxdb, database k6;
//	                and Grafana (GRAFANA_HOME, or grafana-server/grafana on PATH) on $GRAFANA_ADDR
//	                (127.0.0.1:3000), provisioned from dashboards/provisioning, anonymous read-only
//	observe down    stop them, by pid (the data stays)
//	observe status  are they up, where
//	observe attach  adopt the InfluxDB docker compose started (profile observe) on $INFLUXDB_ADDR
//	observe env     K6_OUT=proxybench-influxdb K6_INFLUXDB_ADDR=… K6_INFLUXDB_BUCKET=k6 when it is up, nothing otherwise
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/stack"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: observe up|down|status|env|attach")
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
	case "attach":
		err = attach(ctx)
	default:
		err = fmt.Errorf("unknown command %q: up, down, status, env or attach", os.Args[1])
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

// running is the state of an InfluxDB that is still up, or nil.
func running() (*observe.State, error) {
	st, err := observe.LoadState(runDir())
	if err != nil || st == nil {
		return nil, err
	}
	if st.Engine == stack.EngineCompose && st.PID == 0 {
		// /proc did not show compose's process: up is what answers
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if observe.Ping(ctx, st.URL()) != nil {
			return nil, nil
		}
		return st, nil
	}
	if !st.Alive() {
		return nil, nil
	}
	return st, nil
}

// attach adopts the InfluxDB of compose's observe profile, once it answers, so that make k6
// streams into it as into the native one.
func attach(ctx context.Context) error {
	addr := strings.TrimPrefix(envOr("INFLUXDB_ADDR", observe.DefaultAddr), "http://")
	bucket := envOr("INFLUXDB_BUCKET", observe.DefaultBucket)
	st := &observe.State{Server: observe.Server{Addr: addr, Dir: "compose"}, Bucket: bucket, Engine: stack.EngineCompose}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := observe.Ping(wctx, st.URL())
		if err == nil {
			break
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("no InfluxDB answers on %s: %w (is compose's observe profile up? `docker compose logs influxdb`)", st.URL(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if _, port, err := net.SplitHostPort(addr); err == nil {
		if n, err := strconv.Atoi(port); err == nil {
			if pid, _ := stack.PortHolder("tcp", n); pid > 0 {
				st.Process = stack.Adopt(pid)
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(observe.StatePath(runDir())), 0o755); err != nil {
		return err
	}
	fmt.Printf("influxdb attached  pid %-7d %s (docker compose)\n", st.PID, st.URL())
	return st.Save(runDir())
}

func up(ctx context.Context) error {
	st, err := influxUp(ctx)
	if err != nil {
		return err
	}
	return grafanaUp(ctx, st)
}

// grafanaUp starts the installed Grafana, if any, provisioned from the repository and reading
// the InfluxDB st; none installed is one line, not an error (Grafana is optional).
func grafanaUp(ctx context.Context, st *observe.State) error {
	if g, err := observe.LoadGrafanaState(runDir()); err != nil {
		return err
	} else if g != nil && g.Alive() {
		fmt.Printf("grafana already up  pid %-7d %s\n", g.PID, g.URL())
		return nil
	}
	inst, err := observe.FindGrafana()
	if err != nil {
		fmt.Printf("grafana: not started: %v; the dashboards: dashboards/README.md\n", err)
		return nil
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	t0 := time.Now()
	g, err := observe.StartGrafana(ctx, inst, root, filepath.Join(runDir(), "grafana"),
		envOr("GRAFANA_ADDR", observe.GrafanaDefaultAddr), st.URL())
	if errors.Is(err, observe.ErrAddrInUse) {
		// a Grafana service of the user's own on :3000 is no reason to fail make up
		fmt.Printf("grafana: not started: %v\n", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("grafana: %w", err)
	}
	if err := observe.SaveGrafanaState(runDir(), g); err != nil {
		_ = g.Stop(10 * time.Second)
		return err
	}
	fmt.Printf("grafana up    pid %-7d %-22s ready in %v  (%s, anonymous read-only; a run: %s)\n", g.PID, "grafana",
		time.Since(t0).Round(time.Millisecond), g.URL(), g.URL()+"/d/"+observe.ComparisonUID+"?var-testid=<testid>")
	return nil
}

// repoRoot is the checkout whose dashboards/provisioning Grafana reads: the working directory
// (make runs bin/observe from it).
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(wd, "dashboards", "provisioning")); err != nil {
		return "", fmt.Errorf("grafana: run from the repository's root (no dashboards/provisioning in %s)", wd)
	}
	return wd, nil
}

func influxUp(ctx context.Context) (*observe.State, error) {
	if st, err := running(); err != nil {
		return nil, err
	} else if st != nil {
		fmt.Printf("influxdb already up  pid %-7d %s\n", st.PID, st.URL())
		return st, nil
	}
	bin, err := observe.InstalledBinary()
	if err != nil {
		return nil, err
	}
	addr := strings.TrimPrefix(envOr("INFLUXDB_ADDR", observe.DefaultAddr), "http://")
	bucket := envOr("INFLUXDB_BUCKET", observe.DefaultBucket)
	t0 := time.Now()
	s, err := observe.Start(ctx, bin, filepath.Join(runDir(), "influxdb"), addr, bucket)
	if err != nil {
		return nil, err
	}
	st := &observe.State{Server: *s, Bucket: bucket}
	if err := st.Save(runDir()); err != nil {
		_ = s.Stop(10 * time.Second)
		return nil, err
	}
	fmt.Printf("influxdb up   pid %-7d %-22s ready in %v  (%s, database %s, data in %s)\n", s.PID,
		"influxdb "+observe.Version, time.Since(t0).Round(time.Millisecond), s.URL(), bucket, s.Dir)
	return st, nil
}

// grafanaDown stops the Grafana `observe up` started, by pid.
func grafanaDown() error {
	g, err := observe.LoadGrafanaState(runDir())
	if err != nil || g == nil {
		return err
	}
	if err := g.Stop(15 * time.Second); err != nil {
		return fmt.Errorf("grafana: %w", err)
	}
	fmt.Printf("grafana down (pid %d)\n", g.PID)
	return os.Remove(observe.GrafanaStatePath(runDir()))
}

func down() error {
	return errors.Join(grafanaDown(), influxDown())
}

func influxDown() error {
	st, err := observe.LoadState(runDir())
	if err != nil || st == nil {
		return err
	}
	if st.Engine == stack.EngineCompose {
		if up, err := running(); err != nil || up != nil {
			return errors.Join(err, errors.New("influxdb was started by docker compose: stop it with `make compose-down`"))
		}
		fmt.Println("influxdb (docker compose) forgotten: it is down")
		return os.Remove(observe.StatePath(runDir()))
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
	if g, err := observe.LoadGrafanaState(runDir()); err == nil && g != nil && g.Alive() {
		fmt.Printf("grafana        pid %-7d %s  dashboards: %s\n", g.PID, g.URL(), g.URL()+"/d/"+observe.ComparisonUID+"?var-testid=<testid>")
	}
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
