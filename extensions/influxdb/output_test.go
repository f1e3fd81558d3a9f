package influxdb

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/metrics"

	"github.com/proxybench/proxybench/extensions/histogram"
)

// feed sends n requests' samples (http_reqs + http_req_duration of i%50+1 ms) to the output,
// spread over the last n ms, in containers of 100 as k6's output manager does.
func feed(o *Output, s *sampler, tags *metrics.TagSet, n int) {
	reqs := s.metric("http_reqs", metrics.Counter)
	dur := s.metric("http_req_duration", metrics.Trend)
	start := time.Now().Add(-time.Duration(n) * time.Millisecond)
	var batch []metrics.SampleContainer
	for i := range n {
		at := start.Add(time.Duration(i) * time.Millisecond)
		batch = append(batch, metrics.ConnectedSamples{
			Samples: []metrics.Sample{sample(reqs, tags, at, 1), sample(dur, tags, at, float64(i%50+1))},
			Tags:    tags, Time: at,
		})
		// as k6 gives them: the VU and iteration as metadata, not tags
		for j := range batch[len(batch)-1].(metrics.ConnectedSamples).Samples {
			batch[len(batch)-1].(metrics.ConnectedSamples).Samples[j].Metadata = map[string]string{"vu": strconv.Itoa(i%8 + 1), "iter": strconv.Itoa(i)}
		}
		if len(batch) == 100 {
			o.AddMetricSamples(batch)
			batch = nil
		}
	}
	o.AddMetricSamples(batch)
}

// Aggregated points land in a real InfluxDB 1.8 through /api/v2/write, the database is created
// at start, and the totals read back with InfluxQL are the exact totals sent.
func TestOutputAggregateInfluxDB(t *testing.T) {
	t.Parallel()
	addr := influxAddr(t)
	db := "agg_" + fmt.Sprint(time.Now().UnixNano())
	o, hook := newTestOutput(t, map[string]string{"K6_INFLUXDB_ADDR": addr, "K6_INFLUXDB_BUCKET": db}, "")
	require.NoError(t, o.Start())
	s := newSampler()
	feed(o, s, s.tags("testid", "agg", "target", "direct", "scenario", "reused-h1c", "status", "200"), 3000)
	feed(o, s, s.tags("testid", "agg", "target", "nginx", "scenario", "reused-h1c", "status", "200"), 1234)
	require.NoError(t, o.Stop())

	st := o.Stats()
	assert.Zero(t, st.Dropped(), "%+v", st)
	assert.Equal(t, st.Points, st.Written)
	assert.Empty(t, warnings(hook))

	for target, want := range map[string]float64{"direct": 3000, "nginx": 1234} {
		for _, agg := range []string{aggInterval, aggRun} {
			rows := query(t, addr, db, fmt.Sprintf(
				`SELECT sum("sum") FROM "http_reqs" WHERE "agg" = '%s' AND "target" = '%s' AND "testid" = 'agg'`, agg, target))
			require.Len(t, rows, 1, "%s %s", target, agg)
			assert.Equal(t, want, num(t, rows[0][1]), "%s %s", target, agg)
		}
		rows := query(t, addr, db, fmt.Sprintf(
			`SELECT "count", "p50", "p99", "max" FROM "http_req_duration" WHERE "agg" = 'run' AND "target" = '%s'`, target))
		require.Len(t, rows, 1)
		assert.Equal(t, want, num(t, rows[0][1]))
		assert.InDelta(t, 25.5, num(t, rows[0][2]), 1, "p50 of 1..50 ms")
		assert.InDelta(t, 50, num(t, rows[0][3]), 50*histogram.RelErr)
		assert.Equal(t, 50.0, num(t, rows[0][4]))
	}
}

// Raw mode writes one point per sample, in xk6-output-influxdb's shape (field "value").
func TestOutputRawInfluxDB(t *testing.T) {
	t.Parallel()
	addr := influxAddr(t)
	db := "raw_" + fmt.Sprint(time.Now().UnixNano())
	o, hook := newTestOutput(t, nil, addr+"/"+db+"?mode=raw&pushInterval=100ms")
	require.NoError(t, o.Start())
	s := newSampler()
	feed(o, s, s.tags("testid", "raw", "target", "direct", "url", "http://bench.test/"), 700)
	require.NoError(t, o.Stop())
	assert.Empty(t, warnings(hook))
	assert.Equal(t, int64(1400), o.Stats().Written)

	rows := query(t, addr, db, `SELECT count("value"), sum("value") FROM "http_reqs" WHERE "testid" = 'raw'`)
	require.Len(t, rows, 1)
	assert.Equal(t, 700.0, num(t, rows[0][1]))
	assert.Equal(t, 700.0, num(t, rows[0][2]))
	rows = query(t, addr, db, `SELECT "value", "url" FROM "http_req_duration" LIMIT 1`)
	require.Len(t, rows, 1)
	assert.Equal(t, "http://bench.test/", rows[0][2], "url is a field by default (K6_INFLUXDB_TAGS_AS_FIELDS)")
	// field types as grafana/xk6-output-influxdb writes them, so both can share a bucket
	types := map[string]any{}
	for _, r := range query(t, addr, db, `SHOW FIELD KEYS FROM "http_req_duration"`) {
		types[r[0].(string)] = r[1]
	}
	assert.Equal(t, map[string]any{"value": "float", "vu": "integer", "iter": "integer", "url": "string"}, types)
}

// A database that is down gives one clear warning at start, nothing else: the test goes on,
// every point is counted as dropped, and the end report says so.
func TestOutputDatabaseDown(t *testing.T) {
	t.Parallel()
	port := freePort(t) // nothing listens there any more
	o, hook := newTestOutput(t, map[string]string{"K6_INFLUXDB_ADDR": fmt.Sprintf("http://127.0.0.1:%d", port)},
		"?pushInterval=1s")
	require.NoError(t, o.Start(), "a database that is down must not stop the test")
	s := newSampler()
	start := time.Now()
	for range 3 {
		feed(o, s, s.tags("target", "direct"), 1000)
	}
	assert.Less(t, time.Since(start), time.Second, "AddMetricSamples never waits for the database")
	o.flush() // a write attempt while the test runs
	require.NoError(t, o.Stop())

	st := o.Stats()
	assert.Zero(t, st.Written)
	assert.Positive(t, st.Points)
	assert.Equal(t, st.Points, st.Dropped(), "%+v", st)
	w := warnings(hook)
	require.Len(t, w, 2, "one warning when the database is found down, one report at the end")
	assert.Contains(t, w[0].Message, "is not reachable: the test goes on")
	assert.Contains(t, w[1].Message, "points DROPPED")
	assert.Contains(t, w[1].Message, fmt.Sprintf("%d in failed writes", st.DroppedWrite))
}

// A database that goes down in the middle of the test: the first failed write warns once.
func TestOutputWriteFailsOnce(t *testing.T) {
	t.Parallel()
	var writes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writes.Add(1)
		http.Error(w, `{"error":"database not found: \"k6\""}`, http.StatusNotFound)
	}))
	defer srv.Close()
	o, hook := newTestOutput(t, map[string]string{"K6_INFLUXDB_ADDR": srv.URL, "K6_INFLUXDB_MODE": "raw"}, "")
	require.NoError(t, o.Start())
	s := newSampler()
	for range 5 {
		feed(o, s, s.tags("target", "direct"), 10)
		o.flush()
	}
	require.NoError(t, o.Stop())
	assert.GreaterOrEqual(t, writes.Load(), int32(5))
	w := warnings(hook)
	require.Len(t, w, 2, "one warning for the failing writes, one report at the end")
	assert.Contains(t, w[0].Message, "can't write to InfluxDB")
	assert.Contains(t, fmt.Sprint(w[0].Data["error"]), "404 Not Found")
	assert.Contains(t, fmt.Sprint(w[0].Data["error"]), "database not found")
	assert.Equal(t, int64(100), o.Stats().DroppedWrite)
}

// A slow database fills the bounded queue: what doesn't fit is dropped and counted, never
// waited for, and written + dropped = produced.
func TestOutputQueueDropAccounting(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	inWrite := make(chan struct{}, 1) // a write reached the database: its batch left the queue
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		select {
		case inWrite <- struct{}{}:
		default:
		}
		<-release
		body, _ := io.ReadAll(r.Body)
		written.Add(int64(strings.Count(string(body), "\n")))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	o, hook := newTestOutput(t, map[string]string{
		"K6_INFLUXDB_ADDR": srv.URL, "K6_INFLUXDB_MODE": "raw", "K6_INFLUXDB_QUEUE_LIMIT": "250",
		"K6_INFLUXDB_CONCURRENT_WRITES": "1", "K6_INFLUXDB_PUSH_INTERVAL": "1h",
	}, "")
	require.NoError(t, o.Start())
	s := newSampler()
	tags := s.tags("target", "direct")

	feed(o, s, tags, 50) // 100 points: buffered
	o.flush()            // → the writer, which hangs in the request
	select {
	case <-inWrite:
	case <-time.After(5 * time.Second):
		t.Fatal("the first flush never reached the database")
	}
	feed(o, s, tags, 100) // 200 points: buffered
	o.flush()             // queued (200 ≤ 250)
	feed(o, s, tags, 100) // 200 points
	o.flush()             // 200 queued + 200 > 250: dropped
	// k6 hands samples over in calls; feed makes one per 100 requests (200 points): the first
	// call is buffered, the second would take the buffer over 250 and is dropped at once
	feed(o, s, tags, 200)
	st := o.Stats()
	assert.Equal(t, int64(400), st.DroppedQueue, "%+v", st)

	close(release)
	require.Eventually(t, func() bool { return written.Load() == 300 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, o.Stop()) // writes the 200 buffered points
	st = o.Stats()
	assert.Equal(t, int64(900), st.Points)
	assert.Equal(t, int64(500), st.Written)
	assert.Equal(t, int64(500), written.Load())
	assert.Equal(t, st.Points, st.Written+st.Dropped())
	w := warnings(hook)
	require.Len(t, w, 1)
	assert.Contains(t, w[0].Message, "400 of 900 points DROPPED: 400 queue full (K6_INFLUXDB_QUEUE_LIMIT=250)")
}

// Batches carry at most maxBatchPoints lines, split on line ends.
func TestSplitBatches(t *testing.T) {
	t.Parallel()
	var buf []byte
	for i := range 12 {
		buf = fmt.Appendf(buf, "m v=%d %d\n", i, i)
	}
	bs := splitBatches(buf, 12, 5)
	require.Len(t, bs, 3)
	assert.Equal(t, []int{5, 5, 2}, []int{bs[0].points, bs[1].points, bs[2].points})
	assert.Equal(t, "m v=10 10\nm v=11 11\n", string(bs[2].body))
	assert.Nil(t, splitBatches(nil, 0, 5))
}

func TestLineProtocolEscaping(t *testing.T) {
	t.Parallel()
	tags := appendTags(nil, [][2]string{{"a b", "c,d=e"}, {"empty", ""}, {"n", "x\ny"}})
	b, ok := appendPoint(nil, append([]byte(measurementEscaper.Replace("my metric,1")), tags...), []field{
		{key: "v", value: 1.5}, {key: "nan", value: nanValue()}, {key: "s", str: `say "hi" \o/`, isString: true},
	}, 42)
	require.True(t, ok)
	assert.Equal(t, `my\ metric\,1,a\ b=c\,d\=e,n=x\ y v=1.5,s="say \"hi\" \\o/" 42`+"\n", string(b))
	_, ok = appendPoint(nil, []byte("m"), []field{{key: "nan", value: nanValue()}}, 1)
	assert.False(t, ok, "a point without a writable field is left out")
}

func nanValue() float64 { var z float64; return z / z }
