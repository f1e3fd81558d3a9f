package observe

import (
	"strings"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
)

func TestResourceLine(t *testing.T) {
	t.Parallel()
	r := &result.Result{TestID: "id 1,a=b", Target: "nginx", Mode: "reused", Scenario: "reused-h2", Proto: "", ExpectedProto: "HTTP/2.0"}
	res := &sample.Resources{TargetCPUPerReqMicros: 44.25, TargetCPUSeconds: 3.5, RSSPeakMB: 12, RSSMeanMB: 11.5, Requests: 79000, ClientCPUUtil: 0.91, ClientCPUShare: 0.5, ClientCPUs: 2, ClientBound: true}
	got := ResourceLine(r, res, time.Unix(1, 5))
	want := `proxybench_resources,mode=reused,proto=HTTP/2.0,scenario=reused-h2,target=nginx,testid=id\ 1\,a\=b ` +
		"target_cpu_us_per_req=44.25,target_cpu_s=3.5,rss_peak_mb=12,rss_mean_mb=11.5,requests=79000,client_cpu_util=0.91,client_cpu_share=0.5,client_bound=true 1000000005\n"
	if got != want {
		t.Errorf("ResourceLine:\n got %q\nwant %q", got, want)
	}
	// what was not measured is left out, not written as 0: a probe too short for /proc's ticks,
	// a client not sampled
	short := &sample.Resources{RSSPeakMB: 12, RSSMeanMB: 11.5, Requests: 6}
	if got, want := ResourceLine(r, short, time.Unix(1, 5)), "rss_peak_mb=12,rss_mean_mb=11.5,requests=6 1000000005\n"; !strings.HasSuffix(got, " "+want) {
		t.Errorf("ResourceLine of a run too short to measure:\n got %q\nwant … %q", got, want)
	}
	// a probe's point is tagged with its k6 scenario, as k6's own points are: h1c apart from h1
	probe := &result.Result{TestID: "t", Target: "nginx", Mode: "probe", Scenario: "json", Proto: "h1c", ExpectedProto: "HTTP/1.1"}
	if got := ResourceLine(probe, res, time.Unix(1, 5)); !strings.HasPrefix(got, "proxybench_resources,mode=probe,proto=HTTP/1.1,scenario=json-h1c,target=nginx,testid=t ") {
		t.Errorf("ResourceLine of a probe: %q", got)
	}
	// a sweep's run is tagged with its place on it, as its k6 points are
	body := &result.Result{
		TestID: "t", Target: "nginx", Mode: "bodies", Scenario: "bodies-down", Proto: "h2", ExpectedProto: "HTTP/2.0",
		Config: map[string]any{"point": "bodies h2 1024 download"},
	}
	if got := ResourceLine(body, res, time.Unix(1, 5)); !strings.HasPrefix(got, `proxybench_resources,mode=bodies,point=bodies\ h2\ 1024\ download,proto=HTTP/2.0,`) {
		t.Errorf("ResourceLine of a sweep's run: %q", got)
	}
}

func TestResourceWriterFromEnv(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want string // the write URL, "" for no writer
	}{
		{"", ""},
		{"json=x.json", ""},
		{OutputName, "http://127.0.0.1:9/api/v2/write?bucket=k6&org=&precision=ns"},
		{"json=x.json," + OutputName, "http://127.0.0.1:9/api/v2/write?bucket=k6&org=&precision=ns"},
	} {
		t.Setenv("K6_OUT", tc.out)
		t.Setenv("K6_INFLUXDB_ADDR", "http://127.0.0.1:9/")
		t.Setenv("K6_INFLUXDB_BUCKET", "")
		w := ResourceWriterFromEnv()
		got := ""
		if w != nil {
			got = w.url
		}
		if got != tc.want {
			t.Errorf("K6_OUT=%q: writer to %q, want %q", tc.out, got, tc.want)
		}
	}
}

func TestCapacityLine(t *testing.T) {
	t.Parallel()
	s := CapacityStep{TestID: "id 1", Target: "nginx", Proto: "h1c", GoalMS: 10, OfferedRPS: 4000, P99MS: 12.5, Held: false}
	want := `proxybench_capacity,proto=h1c,target=nginx,testid=id\ 1 offered_rps=4000,p99_ms=12.5,held=false,goal_ms=10 1000000005` + "\n"
	if got := CapacityLine(s, time.Unix(1, 5)); got != want {
		t.Errorf("CapacityLine:\n got %q\nwant %q", got, want)
	}
}

// A sweep's point: its place as a tag of its own (each keeps a row in a table), the figures of
// its sweep, and none it has not (no MB/s for idle, no RSS when not sampled).
func TestSweepLine(t *testing.T) {
	t.Parallel()
	mb, kib := 419.43, 18.4
	for _, tc := range []struct {
		p    SweepPoint
		want string
	}{
		{
			SweepPoint{TestID: "t1", Target: "nginx", Proto: "h2", Sweep: BodiesSweep, Direction: "download", X: 1 << 20, Valid: true, RPS: 400, P99MS: 8, RSSPeakMB: 31.2, MBPerS: &mb},
			`proxybench_sweep,direction=download,point=h2\ 1048576\ download,proto=h2,sweep=bodies,target=nginx,testid=t1 x=1048576,valid=true,rps=400,p99_ms=8,rss_peak_mb=31.2,mb_per_s=419.43 1000000005`,
		},
		{
			SweepPoint{TestID: "t1", Target: "direct", Proto: "h1c", Sweep: IdleSweep, X: 10000, Valid: false, P99MS: 6.75, KiBPerConnection: &kib},
			`proxybench_sweep,point=h1c\ 10000,proto=h1c,sweep=idle,target=direct,testid=t1 x=10000,valid=false,rps=0,p99_ms=6.75,kib_per_connection=18.4 1000000005`,
		},
	} {
		if got := SweepLine(tc.p, time.Unix(1, 5)); got != tc.want+"\n" {
			t.Errorf("SweepLine:\n got %q\nwant %q", got, tc.want+"\n")
		}
	}
}
