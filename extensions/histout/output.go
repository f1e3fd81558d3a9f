// Package histout is proxybench's k6 output of mergeable histograms
// (`--out proxybench-histograms=<file>`): every Trend sample goes into a log-linear histogram
// (extensions/histogram) per metric and scenario tag, and the histograms are written to the
// file when the test ends. k6's own summary keeps exact percentiles of one instance only; a run
// split over several k6 instances (execution segments) needs figures that add up, and
// percentiles do not: the histograms of the instances merge into the histogram of the whole,
// within histogram.RelErr.
package histout

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"

	"github.com/proxybench/proxybench/extensions/histogram"
)

// outputName is what `k6 run --out` takes.
const outputName = "proxybench-histograms"

// Schema is the `schema` of the file the output writes.
const Schema = 1

// flushEvery bounds the samples held between two flushes: each flush folds them into the
// histograms, so memory stays that of the histograms however long the test runs.
const flushEvery = 200 * time.Millisecond

// File is what the output writes: Histograms by k6's submetric name, `<metric>{scenario:<name>}`
// (the key a threshold or the summary data gives the same samples). Samples without a scenario
// tag (setup and teardown) are not kept: they are no part of any scenario's measure.
type File struct {
	Schema     int                             `json:"schema"`
	Histograms map[string]*histogram.Histogram `json:"histograms"`
}

// Output folds Trend samples into histograms and writes them at Stop.
type Output struct {
	output.SampleBuffer

	path    string
	flusher *output.PeriodicFlusher
	// by time series, the flusher's goroutine alone: a series' tags are interned by k6, so the
	// map lookup costs no tag reading per sample; series are grouped by scenario at Stop
	series map[metrics.TimeSeries]*histogram.Histogram
}

var _ output.Output = (*Output)(nil)

// New builds the output: its --out argument is the file to write.
func New(params output.Params) (output.Output, error) {
	if params.ConfigArgument == "" {
		return nil, errors.New("proxybench-histograms needs the file to write: --out proxybench-histograms=<file>")
	}
	return &Output{path: params.ConfigArgument, series: map[metrics.TimeSeries]*histogram.Histogram{}}, nil
}

// Description is shown by `k6 run` under "output".
func (o *Output) Description() string {
	return fmt.Sprintf("%s (%s)", outputName, o.path)
}

// Start fails at once when the file cannot be written, rather than after the whole test.
func (o *Output) Start() error {
	if err := o.write(); err != nil {
		return err
	}
	pf, err := output.NewPeriodicFlusher(flushEvery, o.flush)
	if err != nil {
		return err
	}
	o.flusher = pf
	return nil
}

func (o *Output) flush() {
	for _, c := range o.GetBufferedSamples() {
		for _, s := range c.GetSamples() {
			if s.Metric.Type != metrics.Trend {
				continue
			}
			h := o.series[s.TimeSeries]
			if h == nil {
				h = &histogram.Histogram{}
				o.series[s.TimeSeries] = h
			}
			h.Add(s.Value)
		}
	}
}

// Stop flushes what is left and writes the file.
func (o *Output) Stop() error {
	if o.flusher != nil {
		o.flusher.Stop() // flushes once more
	}
	return o.write()
}

// Histograms groups the series' histograms by metric and scenario tag.
func (o *Output) Histograms() map[string]*histogram.Histogram {
	out := map[string]*histogram.Histogram{}
	for ts, h := range o.series {
		sc, ok := ts.Tags.Get("scenario")
		if !ok {
			continue
		}
		key := Key(ts.Metric.Name, sc)
		if out[key] == nil {
			out[key] = &histogram.Histogram{}
		}
		out[key].Merge(h)
	}
	return out
}

// Key is the name of a metric's histogram in a scenario: k6's submetric name.
func Key(metric, scenario string) string {
	return metric + "{scenario:" + scenario + "}"
}

// write replaces the file whole (a temporary file renamed over it): a reader never sees half.
func (o *Output) write() error {
	data, err := json.Marshal(File{Schema: Schema, Histograms: o.Histograms()})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.path), filepath.Base(o.path)+".*")
	if err != nil {
		return fmt.Errorf("proxybench-histograms: write %s: %w", o.path, err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), o.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("proxybench-histograms: write %s: %w", o.path, err)
	}
	return nil
}
