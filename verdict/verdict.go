// Package verdict judges a run: whether its figures count, and if not, why. It is the one place
// the rules of a valid run are written. Every path that reads a run calls it: the runner after
// each k6 run (make k6, make bench), the merge of a split run, and `proxybench table` on a
// result file a user ran by hand. The scripts only count (scenarios/lib/summary.js writes the
// counts and the plan they ran); their k6 thresholds, derived from the same plan, are a stock
// k6's exit code and nothing more.
package verdict

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Run is everything a verdict is drawn from: the client's counts, the plan the script ran,
// and what the runner saw beside it (the upstream's answers, the concurrency the target offers).
type Run struct {
	Mode           string // reused, fresh, probe, equal-load
	ExpectedProto  string // HTTP/1.1, HTTP/2.0, HTTP/3.0
	Route          string
	Requests       float64 // completed in the measured scenario (WebSocket sessions for ws)
	FailedRequests float64
	Passes, Fails  float64 // checks in the measured scenario
	ProtosSeen     map[string]float64
	Dropped        float64 // iterations dropped
	// Behind is the native open model's requests due while their connection was busy (nil: not
	// the native open model).
	Behind         *float64
	NewConnections *float64
	// Late is a closed model's requests that ended after its measured window, left out of its
	// rate (nil: not a closed model).
	Late   *float64
	Counts Counts
	Plan   Plan
	// Segment: one execution segment of a split run. The plan's totals are no one instance's to
	// judge (its share would fail them): Merge judges them on the merged run.
	Segment bool
	// Parts is how many instances a merged split run was made of (0 or 1: a whole run): its
	// totals' reasons say so.
	Parts int
	// Upstream is what the upstream answered on the run's route while the run went on; nil when
	// it was not read (a remote target, k6 cloud, a stack without the counter).
	Upstream *Upstream
	// OfferedStreams is the concurrent streams per connection the target offers (h2's
	// SETTINGS_MAX_CONCURRENT_STREAMS, h3's initial bidirectional stream limit); nil when not
	// read or not multiplexed.
	OfferedStreams *float64
	// Pacing is a paced probe's timing of its parts (stream, sse); nil for the others.
	Pacing *Pacing
	// Faults are what the runner saw go wrong during the run that k6 could not (its target
	// died): reasons as they are.
	Faults []string
}

// Counts are what a script counted beyond the result's headline figures (summary.js).
type Counts struct {
	Unit string `json:"unit"` // "requests" or "WebSocket sessions"
	// Answered is every answer on the run's route that did not fail, over the whole k6 run
	// (setup, warm-up and measured scenario): what the upstream must have answered at least.
	Answered     float64            `json:"answered"`
	Iterations   float64            `json:"iterations"`
	WrongProto   float64            `json:"wrong_proto"`   // responses over another protocol, warm-up included
	BadResponses map[string]float64 `json:"bad_responses"` // by why: status, size, body, proto
	// BodyDiffersAt is the first byte (from 0) at which a body of the right size differed from
	// the upstream's, the lowest seen; BodyBytes the size of that body.
	BodyDiffersAt     *float64 `json:"body_differs_at,omitempty"`
	BodyBytes         float64  `json:"body_bytes,omitempty"`
	ConnectionsOpened *float64 `json:"connections_opened,omitempty"` // warm-up and measured, setup's probe left out
	// ConnectionsHeld is the connections still open and serving at the end (a reused run's
	// measured window, an idle run's hold), as the native loop counts them; nil: not counted
	// (k6/http). ConnectionsLost are those the plan counted on and the target did not keep,
	// by why (refused, reset, timeout, tls, answer, unopened, closed, other).
	ConnectionsHeld  *float64           `json:"connections_held,omitempty"`
	ConnectionsLost  map[string]float64 `json:"connections_lost,omitempty"`
	FailedChecks     []string           `json:"failed_checks"`
	FailedThresholds []string           `json:"failed_thresholds"`
	// SetupOK: setup() probed the target. When it threw, nothing else the run counted matters.
	SetupOK bool `json:"setup_ok"`
	// Findings are a probe's own rules broken, in its words (compressed by the proxy): what
	// only the script sees, response by response.
	Findings []string `json:"findings"`
	// Failures are a probe's measured samples that failed, by why (probe_failures{why}):
	// how each ended, within its timeout (samplesFailed words them).
	Failures map[string]float64 `json:"failures,omitempty"`
	// BodyCut is the downloads whose body ended before BodyBytes (body_cut): a 200 with fewer
	// bytes, or an answer whose connection or stream broke after some of its body.
	BodyCut float64 `json:"body_cut,omitempty"`
}

// Plan is what the script set out to do: the figures its totals are held to.
type Plan struct {
	ExpectedRequests *float64 `json:"expected_requests,omitempty"`
	// MinRequests is the floor of a plan that goes on past it for a time (the native fresh
	// loop until FRESH_DURATION).
	MinRequests *float64 `json:"min_requests,omitempty"`
	// ExpectedIterations, when set, is the iterations the plan runs if not one per request
	// (the native fresh loop: one per VU, each sending its share).
	ExpectedIterations *float64 `json:"expected_iterations,omitempty"`
	ConnectionsPlanned *float64 `json:"connections_planned,omitempty"`
	ConnectionsAllowed *float64 `json:"connections_allowed,omitempty"` // planned plus the reuse margin
	Streams            float64  `json:"streams,omitempty"`             // per connection, h2 and h3
	InFlight           float64  `json:"in_flight"`                     // the most requests in flight at once
	// SampleTimeoutMS is how long each probe sample may take before it fails (probes only).
	SampleTimeoutMS float64 `json:"sample_timeout_ms,omitempty"`
	// Rate and PerIteration are an open model's (equal load): the requests a second it offers,
	// and the requests each of its iterations sends (a dropped iteration drops that many).
	Rate         float64 `json:"rate,omitempty"`
	PerIteration float64 `json:"per_iteration,omitempty"`
}

// Upstream is the audit of a run: what the upstream answered on the run's route while it went
// on, beside what the client completed there.
type Upstream struct {
	Answered  float64 `json:"answered"`  // by the upstream, its counters read before and after the run
	Completed float64 `json:"completed"` // by the client: Counts.Answered
	InFlight  float64 `json:"in_flight"` // the slack: requests in flight at the run's edges
	// Share is Answered / Completed: about 1 (more where a proxy retries), far less for a cache.
	Share float64 `json:"share"`
}

// NewUpstream is the audit of answered requests against the client's completed ones.
func NewUpstream(answered, completed, inFlight float64) *Upstream {
	u := &Upstream{Answered: answered, Completed: completed, InFlight: inFlight}
	if completed > 0 {
		u.Share = round(answered/completed, 4)
	}
	return u
}

// Judge is why the run is invalid: nothing when it is valid. A setup that failed is the one
// reason; a failed threshold is one only when no rule says why.
func Judge(r Run) []string {
	if !r.Counts.SetupOK {
		return append([]string{"setup() failed before any load; k6 printed the reason on stderr " +
			"(target unreachable, certificate, protocol or route)"}, r.Faults...)
	}
	why := each(r)
	if !r.Segment {
		for _, t := range totals(r) {
			if r.Parts > 1 {
				t = "totals: " + t
			}
			why = append(why, t)
		}
	}
	why = append(why, r.Faults...)
	if len(why) == 0 && len(r.Counts.FailedThresholds) > 0 {
		why = append(why, "thresholds failed: "+strings.Join(r.Counts.FailedThresholds, "; "))
	}
	return why
}

// each are the rules that add up over the parts of a split run: every instance is held to them.
func each(r Run) []string {
	var why []string
	for _, rule := range eachRules {
		if s := rule(r); s != "" {
			why = append(why, s)
		}
	}
	why = append(why, r.Counts.Findings...)
	return why
}

// totals are the rules of the plan's totals: judged on a whole run, or on a split run's merge.
func totals(r Run) []string {
	var why []string
	for _, rule := range totalsRules {
		if s := rule(r); s != "" {
			why = append(why, s)
		}
	}
	return why
}

var eachRules = []func(Run) string{
	checksFailed,
	bodyDiffers,
	bodyCut,
	requestsFailed,
	samplesFailed,
	wrongProto,
	protosSeen,
	dropped,
	streamsCapped,
	firstHeldBack,
	partsTogether,
}

var totalsRules = []func(Run) string{
	nothingMeasured,
	windowTooShort,
	requestsNotAllDone,
	iterationsNotAllDone,
	noChecks,
	freshReused,
	reuseBroken,
	connectionsNotHeld,
	answeredWithoutUpstream,
}

func unit(r Run) string {
	if r.Counts.Unit != "" {
		return r.Counts.Unit
	}
	return "requests"
}

// badWhy is the order the reasons a response failed its check are said in.
var badWhy = []string{"status", "size", "body", "proto"}

func checksFailed(r Run) string {
	if r.Fails == 0 {
		return ""
	}
	s := fmt.Sprintf("%s of %s checks failed", n(r.Fails), n(r.Passes+r.Fails))
	if len(r.Counts.FailedChecks) > 0 {
		s += ": " + strings.Join(r.Counts.FailedChecks, ", ")
	}
	var wrong []string
	for _, w := range badWhy {
		if c := r.Counts.BadResponses[w]; c > 0 {
			wrong = append(wrong, w+" "+n(c))
		}
	}
	if len(wrong) > 0 {
		s += " (wrong " + strings.Join(wrong, ", ") + ")"
	}
	return s
}

// bodyDiffers says where the client's body stopped being the upstream's: a proxy that rewrites
// bytes of the same length passes every size check.
func bodyDiffers(r Run) string {
	c := r.Counts.BadResponses["body"]
	if c == 0 {
		return ""
	}
	s := fmt.Sprintf("body differs from the upstream's in %s responses", n(c))
	if at := r.Counts.BodyDiffersAt; at != nil {
		s = fmt.Sprintf("body differs from the upstream's at byte %s of %s in %s responses", n(*at), n(r.Counts.BodyBytes), n(c))
	}
	return s
}

func requestsFailed(r Run) string {
	if r.FailedRequests == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s failed", n(r.FailedRequests), unit(r))
}

func wrongProto(r Run) string {
	if r.Counts.WrongProto == 0 {
		return ""
	}
	return fmt.Sprintf("%s responses (warm-up included) over another protocol than %s", n(r.Counts.WrongProto), r.ExpectedProto)
}

func protosSeen(r Run) string {
	var why []string
	for _, p := range slices.Sorted(maps.Keys(r.ProtosSeen)) {
		if p != r.ExpectedProto && p != "none" && r.ProtosSeen[p] > 0 {
			why = append(why, fmt.Sprintf("%s %s over %s, want %s", n(r.ProtosSeen[p]), unit(r), p, r.ExpectedProto))
		}
	}
	return strings.Join(why, "; ")
}

// dropped: an open model's dropped iterations are its result (it could not sustain the rate),
// any other executor's a run that did not do its plan.
func dropped(r Run) string {
	if r.Mode == "equal-load" || r.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf("%s iterations dropped", n(r.Dropped))
}

// streamsCapped: a target offering fewer concurrent streams than the plan puts on a connection
// ran a fraction of the planned concurrency, and its latency looks better for it.
func streamsCapped(r Run) string {
	if r.OfferedStreams == nil || r.Plan.Streams == 0 || *r.OfferedStreams >= r.Plan.Streams {
		return ""
	}
	return fmt.Sprintf("the target allows %s concurrent stream%s per connection; the plan needs %s",
		n(*r.OfferedStreams), plural(*r.OfferedStreams), n(r.Plan.Streams))
}

func nothingMeasured(r Run) string {
	if r.Requests > 0 {
		return ""
	}
	return "no measured " + unit(r)
}

// windowTooShort: a closed model's rate is the requests that ended inside its window over the
// window; each connection's last request straddles an edge. When a request lasts about as long
// as the window (an 8 MiB body at 0.5 MB/s a connection), the edges, not the target, set how
// many ended inside: all 32 of a run can end a second after it, and its "0 MB/s" would read as
// a figure. Two a connection in flight keep that error under about half.
func windowTooShort(r Run) string {
	if r.Late == nil || r.Plan.InFlight <= 0 || r.Requests == 0 {
		return ""
	}
	inside := r.Requests - *r.Late
	if inside >= windowMinPerInFlight*r.Plan.InFlight {
		return ""
	}
	return fmt.Sprintf("only %s of %s %s ended inside the measured window (%s after it), under %s per request in flight (%s): "+
		"a request lasts about as long as the window, so the rate is not measured; raise DURATION",
		n(inside), n(r.Requests), unit(r), n(*r.Late), n(windowMinPerInFlight), n(r.Plan.InFlight))
}

// windowMinPerInFlight is the requests a closed model must end inside its window per request
// it keeps in flight for its rate to count (windowTooShort).
const windowMinPerInFlight = 2

func requestsNotAllDone(r Run) string {
	if m := r.Plan.MinRequests; m != nil && r.Requests < *m {
		return fmt.Sprintf("%s %s completed, want at least %s", n(r.Requests), unit(r), n(*m))
	}
	e := r.Plan.ExpectedRequests
	if e == nil || r.Requests == *e {
		return ""
	}
	return fmt.Sprintf("%s %s completed, want %s", n(r.Requests), unit(r), n(*e))
}

func iterationsNotAllDone(r Run) string {
	e := r.Plan.ExpectedRequests
	if r.Plan.ExpectedIterations != nil {
		e = r.Plan.ExpectedIterations
	}
	if e == nil || r.Counts.Iterations == *e {
		return ""
	}
	return fmt.Sprintf("%s iterations done, want %s", n(r.Counts.Iterations), n(*e))
}

func noChecks(r Run) string {
	if r.Passes+r.Fails > 0 {
		return ""
	}
	return "no checks ran in the measured scenario"
}

func freshReused(r Run) string {
	if r.Mode != "fresh" {
		return ""
	}
	if r.NewConnections == nil {
		return fmt.Sprintf("new connections not counted for %s requests: every request must open its own", n(r.Requests))
	}
	if *r.NewConnections == r.Requests {
		return ""
	}
	return fmt.Sprintf("%s new connections for %s requests: every request must open its own", n(*r.NewConnections), n(r.Requests))
}

// reuseBroken: a run planning one connection per VU that opened more than the margin allows
// measured handshakes, not steady state.
func reuseBroken(r Run) string {
	allowed := r.Plan.ConnectionsAllowed
	if allowed == nil {
		return ""
	}
	opened := r.Counts.ConnectionsOpened
	if opened == nil && r.Parts > 1 {
		// a partial sum could pass the bound the whole run breaks
		return "not every instance counted the connections it opened: reuse is not proven"
	}
	if opened == nil {
		return "the connections opened were not counted: reuse is not proven"
	}
	if *opened <= *allowed {
		return ""
	}
	by := ""
	if r.Parts > 1 {
		by = fmt.Sprintf(" by %d instances", r.Parts)
	}
	return fmt.Sprintf("%s connections opened%s for %s planned (one per VU, at most %s with the margin) over %s measured requests: "+
		"the target did not keep connections alive", n(*opened), by, n(deref(r.Plan.ConnectionsPlanned)), n(*allowed), n(r.Requests))
}

// lostWords say why connections were not held, in the order a connection's life meets them.
var lostWords = []struct{ why, words string }{
	{"refused", "refused"},
	{"reset", "reset or closed before their first answer"},
	{"timeout", "not connected or not answered within the request timeout"},
	{"tls", "failed their TLS handshake"},
	{"answer", "answered wrong"},
	{"unopened", "not opened in the time given"},
	{"closed", "closed by the target while held"},
	{"other", "lost otherwise"},
}

// connectionsNotHeld: the client counted the connections it still held, serving, at the end
// of the run (a reused run's measured window, an idle run's hold). Fewer than planned, and the
// target capped connections below the plan: it refused, closed or never answered the rest,
// whatever the requests on those it kept say (a connection never answered fails none).
func connectionsNotHeld(r Run) string {
	held, planned := r.Counts.ConnectionsHeld, r.Plan.ConnectionsPlanned
	if held == nil || planned == nil || *held >= *planned {
		return ""
	}
	var why []string
	for _, w := range lostWords {
		if c := r.Counts.ConnectionsLost[w.why]; c > 0 {
			why = append(why, n(c)+" "+w.words)
		}
	}
	s := fmt.Sprintf("the target held %s of the %s connections planned at the end", n(*held), n(*planned))
	if len(why) > 0 {
		s += " (" + strings.Join(why, ", ") + ")"
	}
	return s + ": it caps connections below the plan"
}

// answeredWithoutUpstream: every answer the client completed must have come from the upstream,
// but for the requests in flight at the run's edges. Fewer, and the target answered the rest
// itself: a cache, or a canned reply.
func answeredWithoutUpstream(r Run) string {
	u := r.Upstream
	if u == nil || u.Completed-u.Answered <= u.InFlight {
		return ""
	}
	without := 100 * (u.Completed - u.Answered) / u.Completed
	return fmt.Sprintf("the target answered %.1f%% of requests without the upstream (a cache?): the upstream answered %s of the %s the client completed on %s",
		without, n(u.Answered), n(u.Completed), r.Route)
}

func n(x float64) string {
	return fmt.Sprintf("%.0f", x)
}

func plural(x float64) string {
	if x == 1 {
		return ""
	}
	return "s"
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func round(x float64, digits int) float64 {
	f := math.Pow(10, float64(digits))
	return math.Round(x*f) / f
}
