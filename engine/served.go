package engine

import (
	"maps"
	"slices"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// Served is what the stack's state says of each target: the protocols it serves (state.json
// `protocols`: its definition's, each verified by a probe at start), or why it is missing.
// It answers, in one place, whether a target can serve a cell.
type Served struct {
	Protocols map[string][]string
	Missing   map[string]string
}

// ServedBy is what st says each target serves, and which are missing and why.
func ServedBy(st *stack.State) Served {
	// a copy: a bench adds to it the targets that died and would not start again
	sv := Served{Protocols: map[string][]string{}, Missing: maps.Clone(st.Missing)}
	if sv.Missing == nil {
		sv.Missing = map[string]string{}
	}
	for n, r := range st.Targets {
		for _, p := range r.Protocols {
			sv.Protocols[n] = append(sv.Protocols[n], string(p))
		}
	}
	return sv
}

// Serves tells whether target is up and serves proto.
func (s Served) Serves(target, proto string) bool {
	return s.Missing[target] == "" && slices.Contains(s.Protocols[target], proto)
}

// A Skipper records a cell that is not run, as runner.Runner does: a result file that says why.
type Skipper interface {
	Skip(testid string, j runner.Job, serves []string) *result.Result
	SkipMissing(testid string, j runner.Job, how string) *result.Result
}

// Can tells whether j's target is up and serves the protocol j needs.
func (s Served) Can(j runner.Job) bool {
	return s.Serves(j.Target, j.Requires())
}

// NotRun is nil when j's target serves what j needs; else the recorded result that says why it
// is not run: the target is missing (not installed, failed, died), or does not serve the
// protocol (h3 on Pingora). Such a cell is shown as not run, never left out of a table.
func (s Served) NotRun(r Skipper, testid string, j runner.Job) *result.Result {
	if how := s.Missing[j.Target]; how != "" {
		return r.SkipMissing(testid, j, how)
	}
	if !s.Can(j) {
		return r.Skip(testid, j, s.Protocols[j.Target])
	}
	return nil
}
