package load

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
)

// The samples of one request, as k6/http and scenarios/lib/checks.js emit them, minus what
// no proxybench figure reads: http_req_duration and http_req_waiting (one sample each, the
// latency and TTFB of the result), http_req_failed and checks (rates: one sample each, so
// their counts stay per request), and counters summed until the next flush (http_reqs,
// new_connections, late_requests, bad_responses{why}, wrong_proto, body_cut): a counter's total is
// the sum of its samples' values, so a batch of n counts as n requests. A body of the right
// size whose bytes differ adds one body_differs_at sample (a Trend: the offset of its first
// differing byte), as checks.js adds it.
// data_sent and data_received come from k6's dialer, as for k6/http.

// flushEvery bounds how long samples wait before they go to k6, and flushSamples how many.
const (
	flushEvery   = 100 * time.Millisecond
	flushSamples = 4096
)

// customMetrics are the scenarios' own metrics (scenarios/lib/metrics.js, window.js).
type customMetrics struct {
	newConnections, badResponses, wrongProto, lateRequests *metrics.Metric
	bodyDiffersAt                                          *metrics.Metric // a Trend of byte offsets, not times
	bodyCut                                                *metrics.Metric // downloads whose body ended short (done)
	behindSchedule, startLag                               *metrics.Metric // the open model's (open.go)
	connTTFB                                               *metrics.Metric // the fresh loop's (fresh.go)
	connectionsHeld, connectionsLost                       *metrics.Metric // held at a call's end (idle.go)
}

func registerCustom(r *metrics.Registry) (customMetrics, error) {
	var m customMetrics
	for _, c := range []struct {
		name string
		typ  metrics.MetricType
		to   **metrics.Metric
		vt   metrics.ValueType
	}{
		{"new_connections", metrics.Counter, &m.newConnections, metrics.Default},
		{"bad_responses", metrics.Counter, &m.badResponses, metrics.Default},
		{"wrong_proto", metrics.Counter, &m.wrongProto, metrics.Default},
		{"late_requests", metrics.Counter, &m.lateRequests, metrics.Default},
		{"body_differs_at", metrics.Trend, &m.bodyDiffersAt, metrics.Default},
		{"body_cut", metrics.Counter, &m.bodyCut, metrics.Default},
		{"behind_schedule", metrics.Counter, &m.behindSchedule, metrics.Default},
		{"start_lag", metrics.Trend, &m.startLag, metrics.Time},
		{"conn_ttfb", metrics.Trend, &m.connTTFB, metrics.Time},
		{"connections_held", metrics.Counter, &m.connectionsHeld, metrics.Default},
		{"connections_lost", metrics.Counter, &m.connectionsLost, metrics.Default},
	} {
		mt, err := r.NewMetric(c.name, c.typ, c.vt)
		if err != nil {
			return m, err
		}
		*c.to = mt
	}
	return m, nil
}

// outcome is one request, from its first byte sent to its last byte received.
type outcome struct {
	start, firstByte, end time.Time
	status                int       // 0: no response
	proto                 string    // the response's protocol (HTTP/1.1, HTTP/2.0), "" without one
	bytes                 int       // body bytes received
	differs               bool      // a body byte differs from plan.expect's (within its length)
	differsAt             int       // the offset of the first that does
	err                   error     // why there was no (whole) response
	dial                  dialTimes // the handshakes of the connection it opened, if dialled
	dialled               bool      // the request opened its connection: its handshakes are timed
	dialStart             time.Time // when it began to (conn_ttfb runs from it to the first byte)
}

// cut tells whether a download's answer began and its body ended before the size expected: a
// 200 with fewer bytes, or an answer whose connection or stream broke after some of its body
// (a proxy that gave up on a large body mid-way). An upload's answer is not a download: its
// short {"bytes":N} is a body that differs.
func (o *outcome) cut(p *plan) bool {
	return p.method == http.MethodGet && o.bytes < p.ExpectBytes && (o.status == http.StatusOK || (o.err != nil && o.bytes > 0))
}

// tagsKey is what varies in a request's tags: a struct, so that finding them again allocates
// nothing per request.
type tagsKey struct {
	status, errCode int
	proto           string
}

// counterKey is one batched counter series.
type counterKey struct {
	m    *metrics.Metric
	tags *metrics.TagSet
}

// recorder turns outcomes into samples for one run() call: the VU's tags are those of the
// iteration that calls it (scenario, …).
type recorder struct {
	ctx    context.Context
	out    chan<- metrics.SampleContainer
	state  *lib.State
	b      *metrics.BuiltinMetrics
	c      customMetrics
	p      *plan
	base   *metrics.TagSet
	meta   map[string]string
	until  time.Time
	byCode map[tagsKey]*metrics.TagSet // request tags by what varies between requests
	check  *metrics.TagSet
	why    map[string]*metrics.TagSet

	buf       metrics.Samples
	counts    map[counterKey]float64
	lastFlush time.Time

	// totals of this run, returned to the script
	requests, failed, late, conns int
}

func newRecorder(ctx context.Context, state *lib.State, c customMetrics, p *plan, until time.Time) *recorder {
	tm := state.Tags.GetCurrentValues()
	base := tm.Tags
	for k, v := range p.Tags {
		base = base.With(k, v)
	}
	r := &recorder{
		ctx: ctx, out: state.Samples, state: state, b: state.BuiltinMetrics, c: c, p: p,
		base: base, meta: tm.Metadata, until: until,
		byCode: map[tagsKey]*metrics.TagSet{}, why: map[string]*metrics.TagSet{},
		counts: map[counterKey]float64{}, lastFlush: time.Now(),
	}
	r.check = base
	if state.Options.SystemTags.Has(metrics.TagCheck) {
		r.check = base.With("check", p.Check)
	}
	return r
}

// requestTags are k6/http's tags for a request that ended with status (0: none) over proto,
// and error code errCode (0: none); only the system tags the test enables. As k6/http, the
// url tag takes the name tag's value when the script names its requests.
func (r *recorder) requestTags(status int, proto string, errCode int) *metrics.TagSet {
	key := tagsKey{status, errCode, proto}
	if t, ok := r.byCode[key]; ok {
		return t
	}
	st := r.state.Options.SystemTags
	t := r.base
	add := func(tag metrics.SystemTag, v string) {
		if st.Has(tag) {
			t = t.With(tag.String(), v)
		}
	}
	add(metrics.TagMethod, r.p.method)
	if name, named := r.p.Tags["name"]; named {
		add(metrics.TagURL, name)
	} else {
		add(metrics.TagURL, r.p.URL)
		add(metrics.TagName, r.p.URL)
	}
	add(metrics.TagStatus, strconv.Itoa(status))
	if proto != "" {
		add(metrics.TagProto, proto)
	}
	add(metrics.TagExpectedResponse, strconv.FormatBool(expectedStatus(status)))
	if errCode != 0 {
		add(metrics.TagErrorCode, strconv.Itoa(errCode))
	}
	r.byCode[key] = t
	return t
}

// expectedStatus is k6/http's default response callback (200 to 399).
func expectedStatus(status int) bool {
	return status >= 200 && status < 400
}

func (r *recorder) sample(m *metrics.Metric, tags *metrics.TagSet, t time.Time, v float64) {
	r.buf = append(r.buf, metrics.Sample{
		TimeSeries: metrics.TimeSeries{Metric: m, Tags: tags},
		Time:       t, Value: v, Metadata: r.meta,
	})
}

func (r *recorder) count(m *metrics.Metric, tags *metrics.TagSet, n float64) {
	r.counts[counterKey{m, tags}] += n
}

// connected counts a connection the loop dialled.
func (r *recorder) connected() {
	r.conns++
	r.count(r.c.newConnections, r.base, 1)
}

// done records one request. Only what is wrong adds a sample beyond the four every request
// has; the check passes only for status 200, the exact body (its size, and its bytes when the
// plan expects some) and the expected protocol. A body of the wrong size is wrong by its size
// (why size); one of the right size whose bytes differ is why body, and body_differs_at gets
// the offset of its first differing byte.
func (r *recorder) done(o outcome) {
	r.requests++
	errCode := 0
	switch {
	case o.status == 0:
		errCode = errorCode(o.err)
	case o.status >= 400:
		errCode = 1000 + o.status // k6's code for an HTTP error status
	}
	tags := r.requestTags(o.status, o.proto, errCode)
	r.count(r.b.HTTPReqs, tags, 1)
	failed := 0.0
	if !expectedStatus(o.status) {
		failed = 1
		r.failed++
	}
	r.sample(r.b.HTTPReqFailed, tags, o.end, failed)
	if o.status != 0 {
		// k6/http times a request only when it has a response
		r.sample(r.b.HTTPReqDuration, tags, o.end, metrics.D(o.end.Sub(o.start)))
		r.sample(r.b.HTTPReqWaiting, tags, o.end, metrics.D(o.firstByte.Sub(o.start)))
		if o.dialled {
			r.sample(r.b.HTTPReqConnecting, tags, o.end, metrics.D(o.dial.connecting))
			if r.p.tls {
				r.sample(r.b.HTTPReqTLSHandshaking, tags, o.end, metrics.D(o.dial.tlsHandshaking))
			}
			r.sample(r.c.connTTFB, r.base, o.end, metrics.D(o.firstByte.Sub(o.dialStart)))
		}
	}
	ok := r.p.check(o)
	if !ok.status {
		r.bad("status")
	}
	switch {
	case !ok.size:
		r.bad("size")
	case !ok.body:
		r.bad("body")
		r.sample(r.c.bodyDiffersAt, r.base, o.end, float64(o.differsAt))
	}
	if o.cut(r.p) {
		r.count(r.c.bodyCut, r.base, 1)
	}
	if !ok.proto {
		r.bad("proto")
		if o.status != 0 {
			r.count(r.c.wrongProto, r.base, 1)
		}
	}
	pass := 0.0
	if ok.pass() {
		pass = 1
	}
	r.sample(r.b.Checks, r.check, o.end, pass)
	late := o.end.After(r.until)
	if late {
		r.late++
		r.count(r.c.lateRequests, r.base, 1)
	}
	// past the deadline every request is sent on at once: the iteration's context may end
	// while the last answers are awaited, and a sample pushed then is lost
	if len(r.buf) >= flushSamples || o.end.Sub(r.lastFlush) >= flushEvery || late {
		r.flush(o.end)
	}
}

// checked is what every answer is held to: status 200, the exact body (its size, and its bytes
// when the plan expects some) and the expected protocol.
type checked struct {
	status, size, body, proto bool
}

func (p *plan) check(o outcome) checked {
	c := checked{
		status: o.status == 200,
		size:   o.status != 0 && o.bytes == p.ExpectBytes,
		proto:  o.status != 0 && o.proto == p.protoTag,
	}
	c.body = c.size && !o.differs
	return c
}

func (c checked) pass() bool { return c.status && c.body && c.proto }

// held counts n connections still open and serving at the end of a call.
func (r *recorder) held(n int) {
	if n > 0 {
		r.count(r.c.connectionsHeld, r.base, float64(n))
	}
}

// lost counts n connections the plan counted on and the server did not keep, by why.
func (r *recorder) lost(why string, n int) {
	if n > 0 {
		r.count(r.c.connectionsLost, r.whyTags(why), float64(n))
	}
}

// behind records when a request of the open model left: late, its connection was still busy
// when it was due; lag, how long after it was due it left.
func (r *recorder) behind(late bool, lag time.Duration) {
	if late {
		r.count(r.c.behindSchedule, r.base, 1)
	}
	r.sample(r.c.startLag, r.base, time.Now(), metrics.D(lag))
}

func (r *recorder) bad(why string) {
	r.count(r.c.badResponses, r.whyTags(why), 1)
}

// whyTags are the base tags with why, made once per why.
func (r *recorder) whyTags(why string) *metrics.TagSet {
	t, ok := r.why[why]
	if !ok {
		t = r.base.With("why", why)
		r.why[why] = t
	}
	return t
}

// flush hands the samples to k6: one container, so k6 takes them in one channel send.
func (r *recorder) flush(now time.Time) {
	for k, n := range r.counts {
		r.sample(k.m, k.tags, now, n)
		delete(r.counts, k)
	}
	r.lastFlush = now
	if len(r.buf) == 0 {
		return
	}
	metrics.PushIfNotDone(r.ctx, r.out, r.buf)
	r.buf = make(metrics.Samples, 0, cap(r.buf))
}
