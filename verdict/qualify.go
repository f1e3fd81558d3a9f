package verdict

import "fmt"

// Qualifications: what a valid run's figures carry beside them. None makes a run invalid (its
// checks passed, its plan was done): each says whose figure it is, or what it measured, so the
// tables and the headline can say it where the figure is read. They are judged here, beside the
// rules of Judge, and nowhere else.

// BehindShare is the share of an open model's requests that may be due while their connection
// still carried the one before (behind_schedule) before the target is said not to sustain the
// rate: the native open model's margin.
const BehindShare = 0.01

// Overload says why an open-model run (equal load) did not sustain its rate, or "" when it did:
// on the native loop, more than BehindShare of its requests were due while their connection was
// busy; on k6's constant-arrival-rate, iterations were dropped (every VU busy). A result, not a
// reason the run is invalid: the latency it measured is the target's at that rate.
func Overload(r Run) string {
	if r.Mode != "equal-load" {
		return ""
	}
	if b := r.Behind; b != nil {
		if *b <= BehindShare*r.Requests {
			return ""
		}
		return fmt.Sprintf("could not sustain %s req/s: %s of %s requests were due while their connection still carried the one before",
			n(r.Plan.Rate), n(*b), n(r.Requests))
	}
	if r.Dropped == 0 {
		return ""
	}
	per := max(r.Plan.PerIteration, 1)
	return fmt.Sprintf("could not sustain %s req/s: %s of %s requests not started on time (every VU busy)",
		n(r.Plan.Rate), n(r.Dropped*per), n(r.Requests+r.Dropped*per))
}

// ClientBoundUtil and ClientBoundShare are the client's utilisation of the CPU it could have had
// and its share of all the CPU used on its CPUs, over its load phase, from which a run is
// client-bound (ClientBound).
const (
	ClientBoundUtil  = 0.90
	ClientBoundShare = 0.50
)

// ClientBound says whether the client, not the target, set a run's pace: it took all the CPU it
// could have had and was the main user of its CPUs, so a cheaper client would have left the
// target more, and the run's req/s is the client's ceiling rather than the target's. A target
// that used most of the CPUs itself sets its own pace, saturated or not.
func ClientBound(util, share float64) bool {
	return util >= ClientBoundUtil && share >= ClientBoundShare
}

// ClientHeavyRatio is the client's CPU over the target's, while the load ran, from which a run
// is client-heavy (ClientHeavy).
const ClientHeavyRatio = 2.0

// ClientHeavy says whether the client spent at least ClientHeavyRatio times the target's CPU
// while the load ran (a fresh cell's handshakes cost k6 that much more than the target): its
// rate says more about the client than about the target.
func ClientHeavy(clientOverTarget float64) bool {
	return clientOverTarget >= ClientHeavyRatio
}

// ClientOutspent says whether the client used more CPU than the target while the load ran: on
// CPUs they share, the run's rate is more the client's than the target's (the † on req/s).
func ClientOutspent(clientOverTarget float64) bool {
	return clientOverTarget > 1
}

// OutsideLoadShare is the share of the machine's CPU time (wall × CPUs) that processes other
// than the client, the target and the upstream may use during a run before it is flagged
// outside load: on a shared machine a neighbour's build takes CPU from whoever runs beside it,
// and a figure measured then is not the target's alone.
const OutsideLoadShare = 0.10

// OutsideLoad says whether other processes took more than OutsideLoadShare of the machine.
func OutsideLoad(otherShare float64) bool {
	return otherShare > OutsideLoadShare
}
