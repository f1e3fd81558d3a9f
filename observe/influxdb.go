// Package observe runs the optional metrics side of the stack natively: InfluxDB 1.8 (built by
// install-influxdb.sh) on loopback with its data under the run directory, started and stopped
// by pid like the proxies. `bin/observe` (cmd/observe) is what the Makefile calls; the tests
// use the same code to start a throwaway InfluxDB of their own.
package observe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// Defaults of the native stack (InfluxDB on 8086) and of the k6 output.
const (
	DefaultAddr   = "127.0.0.1:8086"
	DefaultBucket = "k6"
	// OutputName is our k6 output (extensions/influxdb).
	OutputName = "proxybench-influxdb"
	// Version is the pinned InfluxDB, the one install-influxdb.sh builds.
	Version = "1.8.10"
)

// Binary is influxd in the install cache.
func Binary(cacheDir string) (string, error) {
	p := filepath.Join(cacheDir, "bin", "influxd")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("influxd is not installed in %s: run `make influxd` (observe/install-influxdb.sh)", p)
	}
	return p, nil
}

// InstalledBinary is influxd in the install cache in use ($PROXYBENCH_CACHE or the default).
func InstalledBinary() (string, error) {
	cache, err := stack.CacheDir()
	if err != nil {
		return "", err
	}
	return Binary(cache)
}

// configTemplate keeps InfluxDB to loopback and to itself: no usage report, the backup RPC on
// an ephemeral port (its default, 8088, is a target's port here), no _internal monitor
// database, no per-request HTTP log, data, meta and WAL under dir.
const configTemplate = `# written by proxybench observe: InfluxDB %[5]s for the native stack
reporting-disabled = true
bind-address = "127.0.0.1:0"

[meta]
  dir = %[1]q
  logging-enabled = false

[data]
  dir = %[2]q
  wal-dir = %[3]q
  query-log-enabled = false

[monitor]
  store-enabled = false

[continuous_queries]
  enabled = false

[http]
  bind-address = %[4]q
  log-enabled = false
  pprof-enabled = false
`

// Server is an influxd started by Start.
type Server struct {
	stack.Process
	Addr string `json:"addr"` // host:port of the HTTP API
	Dir  string `json:"dir"`  // config, data, meta, wal, log
}

// URL is the HTTP API's base URL.
func (s *Server) URL() string { return "http://" + s.Addr }

// Start writes the configuration into dir and starts influxd in its own process group, then
// waits until it answers and creates the database db. On failure nothing is left running.
func Start(ctx context.Context, bin, dir, addr, db string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("InfluxDB address %q: %w", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("InfluxDB address %s is in use (%w): `make observe-down` if it is ours; else stop what holds it, "+
			"or use another port: INFLUXDB_ADDR=127.0.0.1:8087 make up OBSERVE=1 (make k6 and make bench then stream there; "+
			"point Grafana's INFLUXDB_URL at it too)", addr, err)
	}
	_ = l.Close()
	conf := fmt.Sprintf(configTemplate, filepath.Join(dir, "meta"), filepath.Join(dir, "data"),
		filepath.Join(dir, "wal"), net.JoinHostPort(host, port), Version)
	confFile := filepath.Join(dir, "influxdb.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "influxd.log")
	_ = os.Remove(logPath)
	p, err := stack.StartProcess([]string{bin, "run", "-config", confFile}, os.Environ(), dir, logPath)
	if err != nil {
		return nil, err
	}
	s := &Server{Process: *p, Addr: addr, Dir: dir}
	if err := s.waitReady(ctx, p, 30*time.Second); err != nil {
		_ = s.Stop(5 * time.Second)
		return nil, err
	}
	if err := CreateDatabase(ctx, s.URL(), db); err != nil {
		_ = s.Stop(5 * time.Second)
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, p *stack.Process, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		if Ping(ctx, s.URL()) == nil {
			return nil
		}
		select {
		case <-p.Exited():
			return fmt.Errorf("influxd exited during start-up; last lines of %s:\n%s", s.Log, stack.Tail(s.Log, 20))
		case <-ctx.Done():
			return fmt.Errorf("influxd did not answer on %s within %v; last lines of %s:\n%s", s.Addr, limit, s.Log,
				stack.Tail(s.Log, 20))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Ping checks that InfluxDB answers at base.
func Ping(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ping", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("GET %s/ping: %s", base, resp.Status)
	}
	return nil
}

// CreateDatabase creates db (idempotent in InfluxDB 1.x).
func CreateDatabase(ctx context.Context, base, db string) error {
	_, err := Query(ctx, base, "", `CREATE DATABASE "`+strings.ReplaceAll(db, `"`, `\"`)+`"`)
	return err
}

// Series is one series of an InfluxQL result.
type Series struct {
	Name    string            `json:"name"`
	Tags    map[string]string `json:"tags"`
	Columns []string          `json:"columns"`
	Values  [][]any           `json:"values"`
}

// Query runs one InfluxQL statement against db and returns its series; an error InfluxDB
// reports (bad syntax, unknown function) is an error here.
func Query(ctx context.Context, base, db, q string) ([]Series, error) {
	u := base + "/query"
	if db != "" {
		u += "?db=" + url.QueryEscape(db)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(url.Values{"q": {q}}.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Results []struct {
			Error  string   `json:"error"`
			Series []Series `json:"series"`
		} `json:"results"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("InfluxQL %q: %s: %w", q, resp.Status, err)
	}
	if out.Error != "" {
		return nil, fmt.Errorf("InfluxQL %q: %s", q, out.Error)
	}
	if len(out.Results) != 1 {
		return nil, fmt.Errorf("InfluxQL %q: %d results, want 1", q, len(out.Results))
	}
	if out.Results[0].Error != "" {
		return nil, fmt.Errorf("InfluxQL %q: %s", q, out.Results[0].Error)
	}
	return out.Results[0].Series, nil
}

// Scalar runs a statement that selects one value (SELECT sum(…) FROM … WHERE …) and returns it;
// no matching point at all is 0, as it is for Grafana.
func Scalar(ctx context.Context, base, db, q string) (float64, error) {
	series, err := Query(ctx, base, db, q)
	if err != nil || len(series) == 0 {
		return 0, err
	}
	if len(series) != 1 || len(series[0].Values) != 1 || len(series[0].Values[0]) < 2 {
		return 0, fmt.Errorf("InfluxQL %q: want one value, got %+v", q, series)
	}
	f, ok := series[0].Values[0][1].(float64)
	if !ok {
		return 0, fmt.Errorf("InfluxQL %q: value %v is not a number", q, series[0].Values[0][1])
	}
	return f, nil
}

// State is what `observe up` leaves in the run directory for `observe down` and `observe env`.
type State struct {
	Server
	Bucket string `json:"bucket"`
	// Engine is empty for the InfluxDB `observe up` started, stack.EngineCompose for compose's
	// (`observe attach`): that one is compose's to stop.
	Engine string `json:"engine,omitempty"`
}

// StatePath is where the running InfluxDB's state is kept.
func StatePath(runDir string) string { return filepath.Join(runDir, "influxdb", "state.json") }

// LoadState reads the state; (nil, nil) when there is none.
func LoadState(runDir string) (*State, error) {
	data, err := os.ReadFile(StatePath(runDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := &State{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("parse %s: %w (remove it if InfluxDB is not running)", StatePath(runDir), err)
	}
	return st, nil
}

// Save writes the state.
func (st *State) Save(runDir string) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(StatePath(runDir), data, 0o644)
}

// K6Env is the environment that makes k6 stream into this InfluxDB with our output.
func (st *State) K6Env() []string {
	return []string{
		"K6_OUT=" + OutputName,
		"K6_INFLUXDB_ADDR=" + st.URL(),
		"K6_INFLUXDB_BUCKET=" + st.Bucket,
	}
}
