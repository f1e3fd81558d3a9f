package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/runner"
)

// streamToInfluxDB starts a real InfluxDB 1.8 for the test (on 8086 moved by the port offset)
// and makes every k6 run of h stream into it with our aggregating output, as `make up
// OBSERVE=1` makes `make k6` and `make bench` do (through `bin/observe env`).
func (h *harness) streamToInfluxDB(t *testing.T) {
	t.Helper()
	bin, err := observe.InstalledBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := "127.0.0.1:" + strconv.Itoa(8086+portOffset(t))
	srv, err := observe.Start(ctx, bin, filepath.Join(t.TempDir(), "influxdb"), addr, observe.DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(10 * time.Second); err != nil {
			t.Errorf("stop InfluxDB: %v", err)
		}
	})
	h.influx = &observe.State{Server: *srv, Bucket: observe.DefaultBucket}
}

// checkInfluxDB reconciles what the output wrote with what k6 measured: for every measured
// cell, the requests of the measured scenario (warm-up excluded) summed from the aggregated
// per-interval points of its target equal the requests in the cell's result, exactly.
func (h *harness) checkInfluxDB(t *testing.T, testid, scenario string, results []*runner.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, r := range results {
		q := fmt.Sprintf(`SELECT sum("sum") FROM "http_reqs" WHERE "agg" = 'interval' AND "testid" = '%s' `+
			`AND "target" = '%s' AND "scenario" = '%s'`, testid, r.Target, scenario)
		got, err := observe.Scalar(ctx, h.influx.URL(), h.influx.Bucket, q)
		if err != nil {
			t.Errorf("%s/%s: %v", scenario, r.Target, err)
			continue
		}
		if got != r.Requests || got == 0 {
			t.Errorf("%s/%s: InfluxDB counts %v requests, the result %v\n%s", scenario, r.Target, got, r.Requests, q)
		}
	}
}
