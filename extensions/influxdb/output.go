// Package influxdb is proxybench's k6 output to InfluxDB (`--out proxybench-influxdb`): by
// default it aggregates samples per push interval and tag set in the client, so that the points
// written do not grow with the request rate, and it never makes the test wait for the database.
package influxdb

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"
)

// outputName is what `k6 run --out` takes. It is not grafana/xk6-output-influxdb's
// "xk6-influxdb": the aggregated points have another shape than that output's one point per
// sample, and a k6 built with both extensions must not panic on a name registered twice. The
// configuration variables are the same, so switching is changing this name.
const outputName = "proxybench-influxdb"

// stopGrace is how long Stop waits for queued points to be written.
const stopGrace = 15 * time.Second

// Output writes k6's samples to InfluxDB's v2 write API.
type Output struct {
	output.SampleBuffer // raw mode

	cfg      Config
	logger   logrus.FieldLogger
	instance instance

	agg     *aggregator // aggregate mode
	runDone bool        // the whole-run points are written (flusher goroutine only)
	raw     *rawEncoder // raw mode

	w           *writer
	flusher     *output.PeriodicFlusher
	final       atomic.Bool
	rawBuffered atomic.Int64
	points      atomic.Int64
}

var _ output.Output = (*Output)(nil)

// New builds the output from k6's parameters: JSON config, environment and --out argument.
func New(params output.Params) (output.Output, error) {
	return newOutput(params)
}

func newOutput(params output.Params) (*Output, error) {
	cfg, err := GetConsolidatedConfig(params.JSONConfig, params.Environment, params.ConfigArgument)
	if err != nil {
		return nil, err
	}
	in, err := instanceOf(params.ScriptOptions)
	if err != nil {
		return nil, err
	}
	o := &Output{
		cfg:      cfg,
		logger:   params.Logger.WithField("output", outputName),
		instance: in,
	}
	if cfg.Mode.String == ModeAggregate {
		o.agg = newAggregator(cfg.PushInterval.TimeDuration(), cfg.AggregateTags, in, newHistogramSet(cfg.Histograms))
	} else {
		kinds, err := makeFieldKinds(cfg.TagsAsFields)
		if err != nil {
			return nil, err
		}
		o.raw = newRawEncoder(kinds, cfg.Precision.TimeDuration(), in.id)
	}
	return o, nil
}

// Description is shown by `k6 run` under "output".
func (o *Output) Description() string {
	d := fmt.Sprintf("%s (%s, bucket %s, %s every %s", outputName, o.cfg.Addr.String, o.cfg.Bucket.String,
		o.cfg.Mode.String, o.cfg.PushInterval.TimeDuration())
	if o.instance.id != "" {
		d += ", execution segment " + o.instance.segment
	}
	return d + ")"
}

// Start checks that InfluxDB answers (a database that is down is a warning, never an error:
// the test goes on), creates the 1.x database, and starts flushing every push interval.
func (o *Output) Start() error {
	o.w = newWriter(o.cfg, o.logger)
	version, err := o.w.ping()
	switch {
	case err != nil:
		o.w.failing.Store(true)
		o.w.warned.Store(true)
		o.logger.WithError(err).Warnf("InfluxDB at %s is not reachable: the test goes on without it; points "+
			"that can't be written are dropped and counted (reported at the end)", o.cfg.Addr.String)
	case strings.HasPrefix(version, "1."):
		if err := o.w.createDatabase(o.cfg.Bucket.String); err != nil {
			o.logger.WithError(err).Debug("couldn't create the database; harmless if it exists")
		}
	}
	pf, err := output.NewPeriodicFlusher(o.cfg.PushInterval.TimeDuration(), o.flush)
	if err != nil {
		return err
	}
	o.flusher = pf
	return nil
}

// AddMetricSamples never blocks: aggregate mode folds the samples into the open windows (a map
// update each), raw mode buffers them up to K6_INFLUXDB_QUEUE_LIMIT and drops the rest.
func (o *Output) AddMetricSamples(containers []metrics.SampleContainer) {
	if o.agg != nil {
		o.agg.Add(containers)
		return
	}
	n := int64(0)
	for _, c := range containers {
		n += int64(len(c.GetSamples()))
	}
	if o.rawBuffered.Load()+n > o.cfg.QueueLimit.Int64 {
		o.points.Add(n)
		o.w.droppedQueue.Add(n)
		return
	}
	o.rawBuffered.Add(n)
	o.SampleBuffer.AddMetricSamples(containers)
}

// flush runs in the flusher's goroutine every push interval, and once more from Stop.
func (o *Output) flush() {
	final := o.final.Load()
	e := &encoder{}
	if o.agg != nil {
		o.agg.encodeWindows(o.agg.closeWindows(time.Now(), final), e)
		if final && !o.runDone {
			o.agg.encodeRun(e)
			o.runDone = true
		}
	} else {
		containers := o.GetBufferedSamples()
		n := int64(0)
		for _, c := range containers {
			n += int64(len(c.GetSamples()))
		}
		o.rawBuffered.Add(-n)
		o.raw.encode(containers, e)
	}
	o.points.Add(int64(e.points))
	o.w.enqueue(splitBatches(e.buf, e.points, maxBatchPoints))
}

// Stop writes the last windows and the whole-run points, waits for the queue to drain (at most
// stopGrace) and reports what was written and what was dropped.
func (o *Output) Stop() error {
	if o.flusher == nil {
		return nil
	}
	o.final.Store(true)
	o.flusher.Stop()
	o.w.close(stopGrace)
	s := o.Stats()
	msg := fmt.Sprintf("%d points written to %s (bucket %s) in %d requests", s.Written, o.cfg.Addr.String,
		o.cfg.Bucket.String, s.Requests)
	if s.LateSamples > 0 {
		msg += fmt.Sprintf("; %d samples arrived after their window was written and count in the next one",
			s.LateSamples)
	}
	if s.Dropped() == 0 {
		o.logger.Info(msg + ", none dropped")
		return nil
	}
	o.logger.Warnf("%s; %d of %d points DROPPED: %d queue full (K6_INFLUXDB_QUEUE_LIMIT=%d), %d in failed writes, "+
		"%d still queued when the test ended", msg, s.Dropped(), s.Points, s.DroppedQueue, o.cfg.QueueLimit.Int64,
		s.DroppedWrite, s.DroppedStop)
	return nil
}

// Stats are the output's counters so far.
func (o *Output) Stats() Stats {
	s := Stats{Points: o.points.Load()}
	if o.w != nil {
		s.Written = o.w.written.Load()
		s.Requests = o.w.requests.Load()
		s.DroppedQueue = o.w.droppedQueue.Load()
		s.DroppedWrite = o.w.droppedWrite.Load()
		s.DroppedStop = o.w.droppedStop.Load()
	}
	if o.agg != nil {
		s.LateSamples = int64(o.agg.lateSamples()) //nolint:gosec // a count of samples
	}
	return s
}
