package influxdb

import (
	"fmt"
	"strconv"

	"go.k6.io/k6/v2/lib"
)

// InstanceTag tells apart the k6 instances of one split test (`--execution-segment`, N runner
// pods on the k6-operator). It is not only for display: InfluxDB keeps one point per series and
// time, so without it the instances' points of the same window would overwrite each other.
const InstanceTag = "instance_id"

// instance is the part of the test this k6 runs.
type instance struct {
	id      string  // "" when it runs the whole test
	share   float64 // its execution segment's length: 1 for the whole test
	segment string  // as k6 writes it: "1/2:1"
}

// instanceOf reads the execution segment from the script options k6 hands the output.
//
// A run that isn't split gets no tag, and InfluxQL groups a missing tag as one series, so a
// query that sums over instance_id shows both alike. (The whole-run req/s and percentiles of
// the dashboards read share and the cdf rows, which runs recorded before them do not have.)
//
// With a sequence (`--execution-segment-sequence`, which make k6 SEGMENTS=N and the k6-operator
// pass), the id is the segment's place in it counted from 1, as the k6-operator numbers its
// runner pods and tags their samples (--tag instance_id=1…N, a tag the output keeps: see
// aggregator.tagID), so that a split run reads the same here and on Kubernetes. Without a
// sequence it is the segment itself ("1/4:1/2"): k6 would fill a sequence around each
// instance's segment alone, and those places collide ("1/4:1/2" and "1/2:3/4" would both be 2).
func instanceOf(opts lib.Options) (instance, error) {
	seg := opts.ExecutionSegment
	if seg == nil || seg.FloatLength() >= 1 {
		return instance{share: 1}, nil
	}
	in := instance{id: seg.String(), share: seg.FloatLength(), segment: seg.String()}
	if seq := opts.ExecutionSegmentSequence; seq != nil && len(*seq) > 0 {
		tuple, err := lib.NewExecutionTuple(seg, seq)
		if err != nil {
			return in, fmt.Errorf("%s: execution segment %s: %w", outputName, seg, err)
		}
		in.id = strconv.Itoa(tuple.SegmentIndex + 1)
	}
	return in, nil
}
