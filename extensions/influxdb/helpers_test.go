package influxdb

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"
)

// The tests write to a real InfluxDB 1.8 (`make influxd` builds it into the cache, `make test`
// does that first), started once for the package on a free loopback port. A missing influxd is
// a failure, not a skip: the output can't be said to work without it.

var influx struct {
	once sync.Once
	addr string
	cmd  *exec.Cmd
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if influx.cmd != nil {
		_ = influx.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = influx.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = influx.cmd.Process.Kill()
			<-done
		}
		_ = os.RemoveAll(influx.dir)
	}
	os.Exit(code)
}

// influxdBinary finds influxd: $INFLUXD, then $PROXYBENCH_CACHE/bin, then ~/.cache/proxybench/bin.
func influxdBinary() (string, error) {
	if p := os.Getenv("INFLUXD"); p != "" {
		return p, nil
	}
	cache := os.Getenv("PROXYBENCH_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache", "proxybench")
	}
	p := filepath.Join(cache, "bin", "influxd")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("influxd is not installed (%w): run `make influxd` (observe/install-influxdb.sh) "+
			"or set INFLUXD", err)
	}
	return p, nil
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// influxAddr starts the package's influxd on first use and returns its http://127.0.0.1:port.
func influxAddr(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs influxd (make influxd): not in the fast tier, go test -short")
	}
	influx.once.Do(func() {
		bin, err := influxdBinary()
		if err != nil {
			influx.err = err
			return
		}
		// one influxd for the whole package, removed by TestMain: not the first test's t.TempDir()
		dir, err := os.MkdirTemp("", "influxd-test-") //nolint:usetesting // outlives the test that starts it
		if err != nil {
			influx.err = err
			return
		}
		influx.dir = dir
		port := freePort(t)
		conf := fmt.Sprintf(`reporting-disabled = true
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
  bind-address = "127.0.0.1:%[4]d"
  log-enabled = false
  pprof-enabled = false
`, filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), port)
		cf := filepath.Join(dir, "influxdb.conf")
		if influx.err = os.WriteFile(cf, []byte(conf), 0o600); influx.err != nil {
			return
		}
		cmd := exec.Command(bin, "run", "-config", cf)
		logf, _ := os.Create(filepath.Join(dir, "influxd.log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		if influx.err = cmd.Start(); influx.err != nil {
			return
		}
		influx.cmd = cmd
		influx.addr = "http://127.0.0.1:" + strconv.Itoa(port)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			resp, err := http.Get(influx.addr + "/ping")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusNoContent {
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "influxd.log"))
		influx.err = fmt.Errorf("influxd did not answer on %s within 20s:\n%s", influx.addr, log)
	})
	require.NoError(t, influx.err)
	return influx.addr
}

// query runs InfluxQL and returns the first series' rows (nil when none).
func query(t testing.TB, addr, db, q string) [][]any {
	t.Helper()
	series := querySeries(t, addr, db, q)
	if len(series) == 0 {
		return nil
	}
	return series[0].Values
}

type influxSeries struct {
	Name    string            `json:"name"`
	Tags    map[string]string `json:"tags"`
	Columns []string          `json:"columns"`
	Values  [][]any           `json:"values"`
}

func querySeries(t testing.TB, addr, db, q string) []influxSeries {
	t.Helper()
	resp, err := http.PostForm(addr+"/query?db="+url.QueryEscape(db), url.Values{"q": {q}})
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Results []struct {
			Error  string         `json:"error"`
			Series []influxSeries `json:"series"`
		} `json:"results"`
		Error string `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Empty(t, out.Error, q)
	require.Len(t, out.Results, 1, q)
	require.Empty(t, out.Results[0].Error, q)
	return out.Results[0].Series
}

// num reads a JSON number from a query row.
func num(t testing.TB, v any) float64 {
	t.Helper()
	f, ok := v.(float64)
	require.True(t, ok, "not a number: %#v", v)
	return f
}

// newTestOutput builds the output as k6 would, with a logger whose entries the test can read.
func newTestOutput(t testing.TB, env map[string]string, arg string) (*Output, *test.Hook) {
	t.Helper()
	logger, hook := test.NewNullLogger()
	logger.SetLevel(logrus.DebugLevel)
	o, err := newOutput(output.Params{Logger: logger, Environment: env, ConfigArgument: arg})
	require.NoError(t, err)
	return o, hook
}

// sampler makes samples of real k6 metrics with real tag sets.
type sampler struct {
	reg  *metrics.Registry
	root *metrics.TagSet
}

func newSampler() *sampler {
	r := metrics.NewRegistry()
	return &sampler{reg: r, root: r.RootTagSet()}
}

func (s *sampler) metric(name string, typ metrics.MetricType) *metrics.Metric {
	return s.reg.MustNewMetric(name, typ)
}

func (s *sampler) tags(kv ...string) *metrics.TagSet {
	ts := s.root
	for i := 0; i+1 < len(kv); i += 2 {
		ts = ts.With(kv[i], kv[i+1])
	}
	return ts
}

func sample(m *metrics.Metric, tags *metrics.TagSet, at time.Time, v float64) metrics.Sample {
	return metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: m, Tags: tags}, Time: at, Value: v}
}

// warnings are the log entries at warning level or above.
func warnings(hook *test.Hook) []*logrus.Entry {
	var out []*logrus.Entry
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			out = append(out, e)
		}
	}
	return out
}
