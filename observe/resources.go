package observe

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/runner"
)

// ResourcesMeasurement holds what the runner measured of each run's processes (one point per
// run): the target's CPU per request, CPU seconds and RSS, and the client's CPU use. The
// resources dashboard reads it.
const ResourcesMeasurement = "proxybench_resources"

// ResourcesDashboard is the dashboard (in dashboards/definitions) that reads them.
const ResourcesDashboard = "resources.json"

// CapacityMeasurement holds the capacity search's steps, one point per rate tried: the rate
// offered, the p99 it ran with, and whether it held within the goal. The curves dashboard
// reads it (p99 against offered rate, the highest rate held).
const CapacityMeasurement = "proxybench_capacity"

// CurvesDashboard is the dashboard (in dashboards/definitions) that reads the capacity steps
// and the sweeps' points (SweepMeasurement).
const CurvesDashboard = "curves.json"

// ResourceWriter writes the runner's resource figures to the InfluxDB k6 streams into, through
// the same v2 write API and the same settings (K6_INFLUXDB_ADDR, _ORGANIZATION, _BUCKET,
// _TOKEN), so that they land beside k6's own points, tagged alike.
type ResourceWriter struct {
	url, token string
	client     *http.Client
}

// ResourceWriterFromEnv is the writer for the environment `bin/observe env` gives k6 (K6_OUT
// naming our output), or nil when k6 does not stream into InfluxDB.
func ResourceWriterFromEnv() *ResourceWriter {
	if !slices.Contains(strings.Split(os.Getenv("K6_OUT"), ","), OutputName) && !strings.HasPrefix(os.Getenv("K6_OUT"), OutputName+"=") {
		return nil
	}
	addr := os.Getenv("K6_INFLUXDB_ADDR")
	if addr == "" {
		addr = "http://localhost:8086" // the output's default
	}
	bucket := os.Getenv("K6_INFLUXDB_BUCKET")
	if bucket == "" {
		bucket = DefaultBucket
	}
	v := url.Values{"org": {os.Getenv("K6_INFLUXDB_ORGANIZATION")}, "bucket": {bucket}, "precision": {"ns"}}
	return &ResourceWriter{
		url:    strings.TrimRight(addr, "/") + "/api/v2/write?" + v.Encode(),
		token:  os.Getenv("K6_INFLUXDB_TOKEN"),
		client: &http.Client{Timeout: 5 * time.Second},
	}
}

// Write sends one run's figures, tagged testid, target, proto (the wire protocol, as k6's
// points: HTTP/1.1, HTTP/2.0, HTTP/3.0), mode and scenario, at time at.
func (w *ResourceWriter) Write(ctx context.Context, r *result.Result, res *sample.Resources, at time.Time) error {
	return w.post(ctx, "resources", ResourceLine(r, res, at))
}

// WriteStep sends one step of a capacity search (CapacityLine).
func (w *ResourceWriter) WriteStep(ctx context.Context, s CapacityStep, at time.Time) error {
	return w.post(ctx, "a capacity step", CapacityLine(s, at))
}

// WriteSweep sends one point of a sweep (SweepLine).
func (w *ResourceWriter) WriteSweep(ctx context.Context, p SweepPoint, at time.Time) error {
	return w.post(ctx, "a sweep's point", SweepLine(p, at))
}

// post writes line, what names it in an error.
func (w *ResourceWriter) post(ctx context.Context, what, line string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewBufferString(line))
	if err != nil {
		return err
	}
	if w.token != "" {
		req.Header.Set("Authorization", "Token "+w.token)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("write %s to InfluxDB: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("write %s to InfluxDB: %s", what, resp.Status)
	}
	return nil
}

// ResourceLine is the run's point in InfluxDB's line protocol.
func ResourceLine(r *result.Result, res *sample.Resources, at time.Time) string {
	proto := r.ExpectedProto
	if proto == "" {
		proto = r.Proto
	}
	// a sweep's run carries its place on the sweep, as its k6 points do (SWEEP_POINT)
	point, _ := r.Config["point"].(string)
	var b strings.Builder
	b.WriteString(ResourcesMeasurement)
	for _, t := range [][2]string{{"mode", r.Mode}, {"point", point}, {"proto", proto}, {"scenario", runner.K6Scenario(r.Scenario, r.Proto)}, {"target", r.Target}, {"testid", r.TestID}} {
		if t[1] != "" {
			b.WriteString("," + t[0] + "=" + escapeTag(t[1]))
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var fields []string
	// A figure not measured is left out, not written as 0: a probe's few requests take less CPU
	// than /proc's 10 ms ticks show, and a client not sampled has no CPU figures. The
	// dashboards then show "not measured" where they would have shown a cost of zero.
	if res.TargetCPUSeconds > 0 {
		fields = append(fields, "target_cpu_us_per_req="+f(res.TargetCPUPerReqMicros), "target_cpu_s="+f(res.TargetCPUSeconds))
	}
	fields = append(fields, "rss_peak_mb="+f(res.RSSPeakMB), "rss_mean_mb="+f(res.RSSMeanMB), "requests="+f(res.Requests))
	if res.ClientCPUs > 0 {
		fields = append(fields, "client_cpu_util="+f(res.ClientCPUUtil), "client_cpu_share="+f(res.ClientCPUShare),
			"client_bound="+strconv.FormatBool(res.ClientBound))
	}
	fmt.Fprintf(&b, " %s %d\n", strings.Join(fields, ","), at.UnixNano())
	return b.String()
}

// escapeTag escapes a tag value for the line protocol: commas, equals signs and spaces.
func escapeTag(s string) string {
	return strings.NewReplacer(",", `\,`, "=", `\=`, " ", `\ `).Replace(s)
}
